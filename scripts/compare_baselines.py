#!/usr/bin/env python3
"""Joins an `fp8gemm bench --csv` result with the H200 baselines (shared/baselines/*.csv).

    scripts/compare_baselines.py bench.csv [--baselines ../shared/baselines] [--markdown]

Per shared point (shape, M): our cuBLASLt default vs the baseline's heuristic-first (top1_us),
our best cuBLASLt tactic vs the baseline's best of 8, our best CUTLASS tactic vs vLLM's configs
(vllm_choice_us and the best of the 5 configs), our best small_m, and torch._scaled_mm.
Ratios are baseline_us / ours (> 1: we are faster). Baselines are one run each: treat < 3% as noise.
"""
import argparse
import csv
import math
import os
import sys


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(row, key):
    try:
        v = float(row.get(key, "") or "nan")
    except ValueError:
        return math.nan
    return v if v > 0 else math.nan


def geomean(xs):
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_csv")
    ap.add_argument("--baselines", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "baselines"))
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    a = ap.parse_args()

    ours = {(r["shape"], int(r["M"])): r for r in read(a.bench_csv) if r.get("batch", "1") == "1"}
    lt = {(r["shape"], int(r["M"])): r for r in read(os.path.join(a.baselines, "h200-cublaslt-algos.csv"))}
    cut = {(r["shape"], int(r["M"])): r for r in read(os.path.join(a.baselines, "h200-cutlass-vllm-configs.csv"))}
    tsm = {(r["shape"], int(r["M"])): r for r in read(os.path.join(a.baselines, "h200-torch-scaled-mm.csv"))}

    rows = []
    for key in sorted(set(ours) & set(lt), key=lambda k: (k[0], k[1])):
        o, b, c, t = ours[key], lt[key], cut.get(key, {}), tsm.get(key, {})
        rows.append({
            "shape": key[0], "M": key[1],
            "default_vs_top1": num(b, "top1_us") / num(o, "cublaslt_default_us"),
            "ltbest_vs_best8": num(b, "best_us") / num(o, "cublaslt_best_us"),
            "our_lt_best_over_default": num(o, "cublaslt_default_us") / num(o, "cublaslt_best_us"),
            "cutlass_vs_vllm_choice": num(c, "vllm_choice_us") / num(o, "cutlass_best_us"),
            "cutlass_vs_vllm_best": num(c, "best_us") / num(o, "cutlass_best_us"),
            "cutlass_vs_our_lt_best": num(o, "cublaslt_best_us") / num(o, "cutlass_best_us"),
            "small_m_vs_default": num(o, "cublaslt_default_us") / num(o, "small_m_best_us"),
            "auto_vs_torch": num(t, "us") / num(o, "auto_us"),
        })
    if not rows:
        sys.exit("no shared (shape, M) points between the bench CSV and the baselines")
    cols = [k for k in rows[0] if k not in ("shape", "M")]
    sep = " | " if a.markdown else "  "
    print(sep.join(["shape", "M"] + cols))
    if a.markdown:
        print("|".join(["---"] * (len(cols) + 2)))
    for r in rows:
        print(sep.join([r["shape"], str(r["M"])] + [f"{r[c]:.3f}" if r[c] == r[c] else "-" for c in cols]))
    print()
    print("geomean (n):")
    for c in cols:
        xs = [r[c] for r in rows if r[c] == r[c]]
        print(f"  {c:28s} {geomean(xs):.3f}  (n={len(xs)})")
    cv = [r["cutlass_vs_vllm_choice"] for r in rows if r["cutlass_vs_vllm_choice"] == r["cutlass_vs_vllm_choice"]]
    if cv:
        strict = sum(1 for x in cv if x >= 1.0) / len(cv)
        noisy = sum(1 for x in cv if x >= 1 / 1.03) / len(cv)
        print(f"best CUTLASS no slower than vLLM's choice: {strict:.1%} ({sum(1 for x in cv if x >= 1.0)}) of {len(cv)} points "
              f"({noisy:.0%} within the baselines' 3% noise)")
    wins = [(r["shape"], r["M"], r["cutlass_vs_our_lt_best"]) for r in rows if r["cutlass_vs_our_lt_best"] > 1.03]
    if wins:
        print("points where CUTLASS beats our best cuBLASLt tactic by > 3%:")
        for s, m, x in wins:
            print(f"  {s} M={m}: {x:.3f}")


if __name__ == "__main__":
    main()
