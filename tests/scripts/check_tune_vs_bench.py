#!/usr/bin/env python3
"""scripts/tune_vs_bench.py on a small synthetic tune JSON and bench CSV: the ratio of the tune's
time of its choice to the bench's time of auto, per M class, counting only bucket edges where auto
ran the tune's choice.

    python3 tests/scripts/check_tune_vs_bench.py REPO_ROOT
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile


def decision(m, choice, us, n=4096, k=4096):
    return {"batch": 1, "n": n, "k": k, "m_bucket": m, "choice": choice, "choice_us": us}


def row(m, auto_us, tactic, n=4096, k=4096):
    return f"s,1,{m},{n},{k},{auto_us},{tactic}\n"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    script = os.path.join(root, "scripts", "tune_vs_bench.py")
    tune = {"decisions": [decision(1, "a", 9.0), decision(16, "b", 10.0), decision(2048, "c", 95.0),
                          decision(4096, "d", 180.0), decision(8192, "e", 380.0)]}
    bench = ("shape,batch,M,N,K,auto_us,auto_tactic\n"
             + row(1, 10.0, "a")        # 0.900, M<=64
             + row(16, 10.0, "b")       # 1.000, M<=64
             + row(2048, 100.0, "c")    # 0.950, 512<M<=2048
             + row(4096, 200.0, "d")    # 0.900, M>2048
             + row(8192, 400.0, "x")    # auto ran another tactic: not counted
             + row(3, 10.0, "a")        # not a tuned edge: not counted
             + row(1, 10.0, "a", n=8192))  # another shape, not tuned: not counted
    with tempfile.TemporaryDirectory() as tmp:
        t, b = os.path.join(tmp, "tune.json.gz"), os.path.join(tmp, "bench.csv")
        with gzip.open(t, "wt") as f:
            json.dump(tune, f)
        with open(b, "w") as f:
            f.write(bench)
        out = subprocess.run([sys.executable, script, t, b], check=True, capture_output=True, text=True).stdout
    errors = []
    if not re.search(r"^M<=64\s+2\s+0\.949\s+1\.000\s+0\.900\s+1\.000$", out, re.M):
        errors.append("M<=64: expected 2 points, geomean 0.949 (sqrt(0.9)), median 1.000")
    if not re.search(r"^64<M<=512\s+0$", out, re.M):
        errors.append("64<M<=512: expected no points")
    if not re.search(r"^512<M<=2048\s+1\s+0\.950\s", out, re.M):
        errors.append("512<M<=2048: expected 1 point at 0.950")
    if not re.search(r"^M>2048\s+1\s+0\.900\s", out, re.M):
        errors.append("M>2048: expected 1 point at 0.900 (M=8192's auto ran another tactic)")
    if errors:
        sys.exit("tune_vs_bench.py:\n  " + "\n  ".join(errors) + "\noutput:\n" + out)


if __name__ == "__main__":
    main()
