#!/usr/bin/env python3
"""The default rules are generated, never hand-edited: fitting them again from the tunes with
tools/tables/fit_default_rules.py must give the committed files byte for byte.

    python3 tests/scripts/check_default_rules.py REPO_ROOT TOOL

TOOL is fp8gemm_small_m_recipes (tools/tables), which the fit asks for small_m's recipe math.
"""
import os
import subprocess
import sys
import tempfile

GENERATED = ["src/core/tables/sm90/selector_rules.inc", "src/core/tables/sm90/small_m_rules.inc",
             "src/core/tables/sm90/cutlass_rules.inc"]


def main():
    root, tool = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([sys.executable, os.path.join(root, "tools", "tables", "fit_default_rules.py"), "--tool", tool,
                            "--write", "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"fit_default_rules.py failed:\n{r.stdout}\n{r.stderr}")
        for path in GENERATED:
            with open(os.path.join(root, path)) as f:
                committed = f.read()
            with open(os.path.join(out, path)) as f:
                fitted = f.read()
            if fitted != committed:
                sys.exit(f"{path} differs from what tools/tables/fit_default_rules.py fits from its tunes; "
                         "regenerate it (its header says how) rather than edit it")
    print(f"{', '.join(GENERATED)}: fitted again from the tunes, identical")


if __name__ == "__main__":
    main()
