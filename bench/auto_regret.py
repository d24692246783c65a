#!/usr/bin/env python3
"""How far `auto` is from the best tactic, from `fp8gemm bench --tactics all --csv` files.

    bench/auto_regret.py bench.csv [more.csv ...] [--worst 10] [--by-m] [--against other.csv]

regret = auto_us / min(auto_us, every <backend>_best_us, cublaslt_default_us) at each point, all
timed in one round-robin run; 1.000 means auto ran the fastest tactic measured. Where the bench
also timed auto and the fastest other tactic again, head to head (its confirm_* columns; bench
--no-confirm-auto leaves them out), that round's regret is the point's, and both are shown: the
first pass's best is the fastest of many noisy medians, biased low. Prints geomean, max and the
count of points <= 1.03 per M range, then the worst points (issue 5's targets: <= 1.03 at every
point, geomean <= 1.01). --against compares point by point with another run of
the same points (e.g. another tune, or untuned auto): which points moved into 1.03 and which out
of it, since two runs' counts can agree while different points miss.
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


def first_round(row):
    """The first head-to-head round's regret where the bench ran several (confirm_round_ratios:
    every round's auto / best, ';'-separated), else NaN."""
    ratios = (row.get("confirm_round_ratios") or "").split(";")
    if len(ratios) < 2:
        return math.nan
    try:
        r = float(ratios[0])
    except ValueError:
        return math.nan
    return max(1.0, r) if r > 0 else math.nan


def load(paths, first_pass=False):
    """(regret, shape, M, auto tactic, best tactic, first-pass regret, timed again?, first round's
    regret) of every point with an auto time; regret is the head-to-head verdict where there is
    one (unless first_pass): the median round's where the bench ran several."""
    points = []
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                auto = num(r, "auto_us")
                if math.isnan(auto):
                    continue
                times = [num(r, k) for k in r if k.endswith("_best_us") or k == "cublaslt_default_us"]
                best_key = min((k for k in r if k.endswith("_best_us")), key=lambda k: num(r, k) if num(r, k) == num(r, k) else 1e30)
                best = min([auto] + [t for t in times if t == t])
                first = auto / best
                again = num(r, "confirm_regret")
                regret = first if first_pass or math.isnan(again) else again
                best_tactic = r.get("confirm_best_tactic") or r.get(best_key.replace("_us", "_tactic"), "")
                points.append((regret, r["shape"], int(r["M"]), r.get("auto_tactic", ""), best_tactic, first,
                               regret is again, first_round(r)))
    return points


def print_summary(title, points):
    print(title)
    print(f"{'range':10} {'points':>6} {'geomean':>8} {'max':>7} {'<=1.03':>7}")
    for label in ("M<=64", "64<M<=256", "M>256", "all"):
        sel = [p[0] for p in points if label == "all" or m_range(p[2]) == label]
        if sel:
            print(f"{label:10} {len(sel):6} {geomean(sel):8.3f} {max(sel):7.3f} {sum(x <= 1.03 for x in sel):7}")


def print_against(points, other_path, first_pass):
    other = {(p[1], p[2]): p for p in load([other_path], first_pass)}
    into, out_of = [], []
    for p in points:
        o = other.get((p[1], p[2]))
        if o and p[0] <= 1.03 < o[0]:
            into.append((p, o))
        elif o and o[0] <= 1.03 < p[0]:
            out_of.append((p, o))
    common = sum((p[1], p[2]) in other for p in points)
    # A point whose auto ran the same tactic in both runs moved by measurement alone.
    same = sum(p[3] == o[3] for p, o in into + out_of)
    print(f"\nagainst {other_path} ({common} common points): {len(into)} moved into 1.03, {len(out_of)} out of it"
          f" ({same} of them with the same auto tactic in both runs)")
    for label, rows in (("into", into), ("out of", out_of)):
        for p, o in sorted(rows, key=lambda x: (x[0][1], x[0][2])):
            was = "the same tactic" if p[3] == o[3] else f"was {o[3]}"
            print(f"  {label:6} {p[1]} M={p[2]}  {o[0]:.3f} -> {p[0]:.3f}  auto={p[3]}  ({was})")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--worst", type=int, default=10, help="list this many worst points")
    ap.add_argument("--by-m", action="store_true", help="also one line per M value")
    ap.add_argument("--against", metavar="OTHER_CSV", help="points that moved into or out of 1.03 against this run")
    ap.add_argument("--first-pass", action="store_true",
                    help="use the first pass's regret everywhere, even where the point was timed again")
    args = ap.parse_args()
    points = load(args.csv, args.first_pass)
    timed_again = sum(p[6] for p in points)
    several_rounds = any(p[7] == p[7] for p in points)  # a first round's regret apart from the verdict
    if timed_again:
        print_summary("first pass (auto and every tactic in one round-robin):", [(p[5],) + p[1:] for p in points])
        print()
        if not args.first_pass and several_rounds:
            # Where a point's first round failed or it was not timed again, its verdict stands in.
            print_summary("timed again, the first round alone (the single-round judge):",
                          [((p[7] if p[7] == p[7] else p[0]),) + p[1:] for p in points])
            print()
    print_summary(f"auto against the fastest other tactic, timed again head to head at {timed_again} points"
                  f"{' (median round)' if several_rounds else ''}:"
                  if timed_again else "regret:", points)
    if args.by_m:
        print(f"\n{'M':>6} {'points':>6} {'geomean':>8} {'max':>7} {'<=1.03':>7}")
        for m in sorted({p[2] for p in points}):
            sel = [p[0] for p in points if p[2] == m]
            print(f"{m:6} {len(sel):6} {geomean(sel):8.3f} {max(sel):7.3f} {sum(x <= 1.03 for x in sel):7}")
    print(f"\nworst {args.worst}:")
    for reg, shape, m, auto_t, best_t, first, again, _ in sorted(points, reverse=True)[: args.worst]:
        was = f" (first pass {first:.3f})" if again else ""
        print(f"  {reg:.3f}{was} {shape} M={m}  auto={auto_t}  best={best_t}")
    if args.against:
        print_against(points, args.against, args.first_pass)


if __name__ == "__main__":
    main()
