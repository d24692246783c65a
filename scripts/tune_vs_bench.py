#!/usr/bin/env python3
"""Did the tune time its choices in the state the bench times them in? The tune's time of its
choice at a bucket edge over the bench's first-pass time of `auto` there, per M class.

    scripts/tune_vs_bench.py TUNE.json[.gz] BENCH.csv

TUNE is `fp8gemm tune --json`, BENCH is `fp8gemm bench --tactics all --csv` run with the tune's
cache (the acceptance's auto_suite.csv: the suite's M values are bucket edges). A point counts
where its M is a tuned key's edge and auto ran the tune's choice there. Below 1 the tune timed
the same tactic faster than the bench did: on the H200 that is the tune measuring at boost
clocks where the bench measured under the power cap (docs/tuning.md "Session 23: the tune and
the judge in different power states"), and the two can then rank tactics differently.
"""
import argparse
import csv
import gzip
import json
import math
import signal

CLASSES = [("M<=64", 64), ("64<M<=512", 512), ("512<M<=2048", 2048), ("M>2048", math.inf)]


def m_class(m):
    return next(name for name, top in CLASSES if m <= top)


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def ratios(tune, bench_rows):
    """{class: [choice_us / auto_us]} over the points where the bench's auto ran the tune's choice."""
    choices = {}
    for d in tune["decisions"]:
        if d.get("choice_us", 0) > 0:
            choices[(int(d["batch"]), int(d["n"]), int(d["k"]), int(d["m_bucket"]))] = d
    out = {name: [] for name, _ in CLASSES}
    for r in bench_rows:
        try:
            key = (int(r["batch"]), int(r["N"]), int(r["K"]), int(r["M"]))
            auto_us = float(r.get("auto_us") or "nan")
        except ValueError:
            continue
        d = choices.get(key)
        if d is None or not auto_us > 0 or r.get("auto_tactic") != d["choice"]:
            continue
        out[m_class(key[3])].append(d["choice_us"] / auto_us)
    return out


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tune", help="fp8gemm tune --json output (.json or .json.gz)")
    ap.add_argument("bench", help="fp8gemm bench --csv output, run with the tune's cache")
    args = ap.parse_args()
    with open(args.bench, newline="") as f:
        rows = list(csv.DictReader(f))
    by_class = ratios(load_json(args.tune), rows)
    print("the tune's time of its choice / the bench's first pass of auto (same tactic, bucket edges):")
    print(f"{'range':<12} {'points':>6} {'geomean':>8} {'median':>7} {'p10':>6} {'p90':>6}")
    for name, _ in CLASSES:
        v = sorted(by_class[name])
        if not v:
            print(f"{name:<12} {0:>6}")
            continue
        g = math.exp(sum(map(math.log, v)) / len(v))
        print(f"{name:<12} {len(v):>6} {g:>8.3f} {v[len(v) // 2]:>7.3f} {v[len(v) // 10]:>6.3f} {v[9 * len(v) // 10]:>6.3f}")


if __name__ == "__main__":
    main()
