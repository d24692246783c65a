#!/usr/bin/env python3
"""Markdown table of an `fp8gemm bench --csv` file for docs/perf.md.

    bench/perf_table.py suite.csv > table.md

One row per point: the cuBLASLt default (us, % of roofline), then every other column the bench
wrote (cublaslt_best, cutlass_best, small_m_best, auto) as ratio to the default (> 1: faster),
and the best tactic overall. Ends with geomeans per M range.
"""
import csv
import math
import sys


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def f(row, key):
    try:
        v = float(row.get(key) or "nan")
    except ValueError:
        return float("nan")
    return v if v > 0 else float("nan")


def main():
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    labels = [k[:-3] for k in rows[0] if k.endswith("_us") and k != "cublaslt_default_us"]
    print("| shape | M | N | K | default us | default %roof | " + " | ".join(f"{l} x" for l in labels) + " | best tactic |")
    print("|" + "---|" * (7 + len(labels)))
    ranges = {"M<=64": lambda m: m <= 64, "64<M<=256": lambda m: 64 < m <= 256, "M>256": lambda m: m > 256}
    ratios = {l: {r: [] for r in list(ranges) + ["all"]} for l in labels}
    for r in rows:
        m = int(r["M"])
        d = f(r, "cublaslt_default_us")
        cells, best, best_name = [], d, r["cublaslt_default_tactic"]
        for l in labels:
            x = f(r, l + "_us")
            ratio = d / x if x == x and d == d else float("nan")
            cells.append(f"{ratio:.3f}" if ratio == ratio else "-")
            for name, pred in ranges.items():
                if pred(m):
                    ratios[l][name].append(ratio)
            ratios[l]["all"].append(ratio)
            if x == x and x < best and l != "auto":
                best, best_name = x, r.get(l + "_tactic", "")
        print(f"| {r['shape']} | {m} | {r['N']} | {r['K']} | {d:.2f} | {f(r, 'cublaslt_default_roofline_pct'):.1f} | "
              + " | ".join(cells) + f" | `{best_name}` |")
    print()
    print("| geomean (x cuBLASLt default) | " + " | ".join(list(ranges) + ["all"]) + " |")
    print("|---|" + "---|" * (len(ranges) + 1))
    for l in labels:
        print(f"| {l} | " + " | ".join(f"{geomean(ratios[l][k]):.3f} (n={sum(1 for x in ratios[l][k] if x == x)})"
                                      for k in list(ranges) + ["all"]) + " |")


if __name__ == "__main__":
    main()
