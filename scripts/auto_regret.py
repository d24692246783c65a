#!/usr/bin/env python3
"""How far `auto` is from the best tactic, from `fp8gemm bench --tactics all --csv` files.

    scripts/auto_regret.py bench.csv [more.csv ...] [--worst 10] [--by-m]

regret = auto_us / min(auto_us, every <backend>_best_us, cublaslt_default_us) at each point, all
timed in one round-robin run; 1.000 means auto ran the fastest tactic measured. Prints geomean,
max and the count of points <= 1.03 per M range, then the worst points (issue 5's targets:
<= 1.03 at every point, geomean <= 1.01).
"""
import argparse
import csv
import math
import signal


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def num(row, key):
    try:
        v = float(row.get(key) or "nan")
    except ValueError:
        return math.nan
    return v if v > 0 else math.nan


def m_range(m):
    return "M<=64" if m <= 64 else "64<M<=256" if m <= 256 else "M>256"


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--worst", type=int, default=10, help="list this many worst points")
    ap.add_argument("--by-m", action="store_true", help="also one line per M value")
    args = ap.parse_args()
    points = []
    for path in args.csv:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                auto = num(r, "auto_us")
                if math.isnan(auto):
                    continue
                times = [num(r, k) for k in r if k.endswith("_best_us") or k == "cublaslt_default_us"]
                best_key = min((k for k in r if k.endswith("_best_us")), key=lambda k: num(r, k) if num(r, k) == num(r, k) else 1e30)
                best = min([auto] + [t for t in times if t == t])
                points.append((auto / best, r["shape"], int(r["M"]), r.get("auto_tactic", ""),
                               r.get(best_key.replace("_us", "_tactic"), "")))
    print(f"{'range':10} {'points':>6} {'geomean':>8} {'max':>7} {'<=1.03':>7}")
    for label in ("M<=64", "64<M<=256", "M>256", "all"):
        sel = [p[0] for p in points if label == "all" or m_range(p[2]) == label]
        if sel:
            print(f"{label:10} {len(sel):6} {geomean(sel):8.3f} {max(sel):7.3f} {sum(x <= 1.03 for x in sel):7}")
    if args.by_m:
        print(f"\n{'M':>6} {'points':>6} {'geomean':>8} {'max':>7} {'<=1.03':>7}")
        for m in sorted({p[2] for p in points}):
            sel = [p[0] for p in points if p[2] == m]
            print(f"{m:6} {len(sel):6} {geomean(sel):8.3f} {max(sel):7.3f} {sum(x <= 1.03 for x in sel):7}")
    print(f"\nworst {args.worst}:")
    for reg, shape, m, auto_t, best_t in sorted(points, reverse=True)[: args.worst]:
        print(f"  {reg:.3f} {shape} M={m}  auto={auto_t}  best={best_t}")


if __name__ == "__main__":
    main()
