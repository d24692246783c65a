#!/usr/bin/env python3
"""scripts/auto_regret.py on two small synthetic bench CSVs: the regret of each point (auto over
the fastest of auto, cuBLASLt's default and every backend's best), the count within 1.03, and
--against: which points moved into and out of 1.03, and how many kept their auto tactic.

    python3 tests/scripts/check_auto_regret.py REPO_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

HEADER = "shape,batch,M,N,K,cublaslt_default_us,cublaslt_best_us,cublaslt_best_tactic,cutlass_best_us,cutlass_best_tactic,auto_us,auto_tactic\n"


def row(shape, m, default, cutlass, auto, tactic):
    return f"{shape},1,{m},4096,4096,{default},{default},cublaslt:d,{cutlass},cutlass:c,{auto},{tactic}\n"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    script = os.path.join(root, "scripts", "auto_regret.py")
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "a.csv"), os.path.join(tmp, "b.csv")
        with open(a, "w") as f:  # regrets 1.000, 1.100 (cutlass 10 is the best), 1.020
            f.write(HEADER + row("s1", 1, 10, 12, 10, "x") + row("s1", 2, 11, 10, 11, "z") + row("s2", 1, 10, 12, 10.2, "w"))
        with open(b, "w") as f:  # regrets 1.100, 1.000, 1.020
            f.write(HEADER + row("s1", 1, 10, 12, 11, "y") + row("s1", 2, 10, 12, 10, "z") + row("s2", 1, 10, 12, 10.2, "w"))
        out = subprocess.run([sys.executable, script, a, "--against", b], check=True, capture_output=True,
                             text=True).stdout
    errors = []
    if not re.search(r"^all\s+3\s+1\.039\s+1\.100\s+2$", out, re.M):
        errors.append("summary line 'all 3 1.039 1.100 2' missing")
    if "(3 common points): 1 moved into 1.03, 1 out of it (1 of them with the same auto tactic in both runs)" not in out:
        errors.append("--against counts wrong")
    if not re.search(r"into\s+s1 M=1\s+1\.100 -> 1\.000\s+auto=x\s+\(was y\)", out):
        errors.append("s1 M=1 should have moved into 1.03, from tactic y")
    if not re.search(r"out of s1 M=2\s+1\.000 -> 1\.100\s+auto=z\s+\(the same tactic\)", out):
        errors.append("s1 M=2 should have moved out of 1.03 with the same tactic")
    if "s2 M=1  1.0" in out:
        errors.append("s2 M=1 did not move and must not be listed")
    if errors:
        sys.exit("auto_regret.py:\n  " + "\n  ".join(errors) + "\noutput:\n" + out)


if __name__ == "__main__":
    main()
