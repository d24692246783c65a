#!/usr/bin/env python3
"""The built-in default table is generated, never hand-edited: regenerating it from the tune files
its header names (with tools/tables/make_default_table.py) must give the committed file byte for byte.
Also checks that FILE:m<=N takes only the keys of M buckets <= N from FILE, FILE:m>N only those
above N, and that A+B takes each key's decision from the tune whose key measured less noise.

    python3 tests/scripts/check_default_table.py REPO_ROOT
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def generate(root, sources, out):
    subprocess.run([sys.executable, os.path.join(root, "tools", "tables", "make_default_table.py"), *sources, "--out", out],
                   cwd=root, check=True, stdout=subprocess.DEVNULL)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    table = os.path.join(root, "src", "core", "tables", "sm90", "exact_table.inc")
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
        # FILE:m<=N / FILE:m>N: rules that end at M <= 16 only / start above 16 only.
        first = re.split(r"[:+]", sources[0])[0]
        for limit, ok in ((":m<=16", lambda lo, hi: hi <= 16), (":m>16", lambda lo, hi: lo > 16)):
            shutil.copy(table, out)
            generate(root, [first + limit], out)
            ranges = rule_ranges(out)
            if not ranges or not all(ok(lo, hi) for lo, hi in ranges):
                sys.exit(f"{first}{limit} gave {len(ranges)} rules, not all of them in its M range")
        check_lower_noise_wins(root, tmp)
    print(f"{table}: regenerated from {', '.join(sources)}, identical")


def rule_ranges(path):
    with open(path) as f:
        return [(int(lo), int(hi)) for lo, hi in
                re.findall(r"\{D::\w+, D::\w+, D::\w+, \d+, \d+, \d+, (\d+), (\d+),", f.read())]


def check_lower_noise_wins(root, tmp):
    """A+B: two tunes of one key (bucket 16) that chose differently; the one with less noise gives the rule,
    whichever file it is in."""
    def tune(path, choice, noise):
        d = {"key": "k16", "a": "e4m3", "b": "e4m3", "out": "bf16", "batch": 1, "n": 4096, "k": 4096, "m_bucket": 16,
             "measured": True, "noise": noise, "choice": choice, "floor": "cublaslt:floor", "segments": []}
        with gzip.open(path, "wt") as f:
            json.dump({"device": {"compute_capability": 90}, "decisions": [d]}, f)
    a, b = os.path.join(tmp, "a.json.gz"), os.path.join(tmp, "b.json.gz")
    tune(a, "small_m:quiet", 0.004)
    tune(b, "small_m:noisy", 0.05)
    template = os.path.join(tmp, "t.cpp")
    for sources in ([a + "+" + b], [b + "+" + a]):
        with open(template, "w") as f:
            f.write("      // BEGIN GENERATED RULES\n      // END GENERATED RULES\n")
        generate(root, sources, template)
        with open(template) as f:
            text = f.read()
        if '"small_m:quiet"' not in text or "noisy" in text:
            sys.exit(f"{sources[0]}: the rule is not the quieter tune's choice:\n{text}")


if __name__ == "__main__":
    main()
