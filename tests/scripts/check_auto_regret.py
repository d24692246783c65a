#!/usr/bin/env python3
"""bench/auto_regret.py on two small synthetic bench CSVs: the regret of each point (auto over
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
    script = os.path.join(root, "bench", "auto_regret.py")
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
    # A bench that timed auto and the fastest other tactic again: that round's regret is the
    # point's, the first pass's is shown beside it, and --first-pass ignores it.
    confirm_header = HEADER.rstrip("\n") + ",confirm_best_tactic,confirm_auto_us,confirm_best_us,confirm_noise,confirm_regret\n"
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "c.csv")
        with open(c, "w") as f:  # first pass 1.100 -> 1.010 timed again; 1.000 (not timed again)
            f.write(confirm_header + row("s1", 2, 11, 10, 11, "z").rstrip("\n") + ",cutlass:c,10.1,10.0,0.002,1.0100\n"
                    + row("s2", 1, 10, 12, 10, "w").rstrip("\n") + ",,,,,\n")
        out = subprocess.run([sys.executable, script, c], check=True, capture_output=True, text=True).stdout
        first = subprocess.run([sys.executable, script, c, "--first-pass"], check=True, capture_output=True,
                               text=True).stdout
    if not re.search(r"first pass.*\n.*\n(.*\n)*all\s+2\s+1\.049\s+1\.100\s+1$", out, re.M):
        errors.append("confirm: first-pass summary 'all 2 1.049 1.100 1' missing")
    if not re.search(r"timed again head to head at 1 points:\n(.*\n)*?all\s+2\s+1\.005\s+1\.010\s+2$", out, re.M):
        errors.append("confirm: timed-again summary 'all 2 1.005 1.010 2' missing")
    if "1.010 (first pass 1.100) s1 M=2" not in out:
        errors.append("confirm: worst list should show 1.010 with its first pass 1.100")
    if not re.search(r"^all\s+2\s+1\.049\s+1\.100\s+1$", first, re.M) or "timed again" in first:
        errors.append("--first-pass should report the first pass only")
    # Several rounds (confirm_round_ratios): the verdict is the median round's; the first round
    # alone is summarized beside it.
    rounds_header = confirm_header.rstrip("\n") + ",confirm_rounds,confirm_round_ratios\n"
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "d.csv")
        with open(d, "w") as f:  # rounds 1.05, 1.01, 0.99: verdict 1.010, first round 1.050
            f.write(rounds_header + row("s1", 2, 11, 10, 11, "z").rstrip("\n")
                    + ",cutlass:c,10.1,10.0,0.002,1.0100,3,1.0500;1.0100;0.9900\n"
                    + row("s2", 1, 10, 12, 10, "w").rstrip("\n") + ",,,,,,0,\n")
        out = subprocess.run([sys.executable, script, d], check=True, capture_output=True, text=True).stdout
    if not re.search(r"the first round alone.*:\n(.*\n)*?all\s+2\s+1\.025\s+1\.050\s+1$", out, re.M):
        errors.append("rounds: first-round summary 'all 2 1.025 1.050 1' missing")
    if not re.search(r"timed again head to head at 1 points \(median round\):\n(.*\n)*?all\s+2\s+1\.005\s+1\.010\s+2$",
                     out, re.M):
        errors.append("rounds: median-round summary 'all 2 1.005 1.010 2' missing")
    if errors:
        sys.exit("auto_regret.py:\n  " + "\n  ".join(errors) + "\noutput:\n" + out)


if __name__ == "__main__":
    main()
