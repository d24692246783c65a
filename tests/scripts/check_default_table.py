#!/usr/bin/env python3
"""The built-in default table is generated, never hand-edited: regenerating it from the tune files
its header names (with scripts/make_default_table.py) must give the committed file byte for byte.
Also checks that FILE:m<=N takes only the keys of M buckets <= N from FILE.

    python3 tests/scripts/check_default_table.py REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def generate(root, sources, out):
    subprocess.run([sys.executable, os.path.join(root, "scripts", "make_default_table.py"), *sources, "--out", out],
                   cwd=root, check=True, stdout=subprocess.DEVNULL)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    table = os.path.join(root, "src", "tune", "default_table_sm90.cpp")
    with open(table) as f:
        committed = f.read()
    m = re.search(r"// \d+ rules from (.+)\n", committed)
    if not m:
        sys.exit(f"{table}: no '// N rules from ...' header; was it edited by hand?")
    sources = [s.strip() for s in m.group(1).split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "table.cpp")
        shutil.copy(table, out)
        generate(root, sources, out)
        with open(out) as f:
            regenerated = f.read()
        if regenerated != committed:
            sys.exit(f"{table} differs from what make_default_table.py makes of {', '.join(sources)}")
        # FILE:m<=N: a source limited to M buckets <= 16 gives rules that end at M <= 16 only.
        limited = [s for s in sources if ":m<=" not in s][:1]
        if limited:
            shutil.copy(table, out)
            generate(root, [limited[0] + ":m<=16"], out)
            with open(out) as f:
                his = [int(x) for x in re.findall(r"\{D::\w+, D::\w+, D::\w+, \d+, \d+, \d+, \d+, (\d+),", f.read())]
            if not his or max(his) > 16:
                sys.exit(f"{limited[0]}:m<=16 gave {len(his)} rules, the largest ending at M={max(his, default=0)}")
    print(f"{table}: regenerated from {', '.join(sources)}, identical")


if __name__ == "__main__":
    main()
