#!/usr/bin/env python3
"""fp8gemm.bmm_fp8 (auto: built-in default, then tuned) against torch._scaled_mm over the DESIGN
suite, timed as docs/design.md "Measuring" asks:
  - CUDA-graph replay of back-to-back calls (20 per graph, down to 3 once a replay lasts ~1 ms);
  - weights rotating through distinct copies totalling >= 2x L2, so they stream from HBM;
  - warm-up, then the median of --replays replays, candidates measured round-robin;
then eager per-call host overhead of both (GPU held busy so that only the host is timed).

  python3 bench/bench_torch.py [--models all] [--m suite] [--csv out.csv] [--md out.md]

The default tactic of each point is what "auto" picks before any tuning in this process
(fp8gemm.choose, then run by name); "tuned" is "auto" after fp8gemm.tune (--cache loads/saves a
cache file). Ratios are torch_us / fp8gemm_us: > 1 means fp8gemm is faster.
"""

import argparse
import csv
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

if os.environ.get("FP8GEMM_TORCH_LIBRARY"):  # a development build: this checkout's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import fp8gemm  # noqa: E402
from fp8gemm.suite import parse_m, shapes  # noqa: E402

E4M3 = torch.float8_e4m3fn
OUT = torch.bfloat16


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="all", help="model presets (comma-separated) or all")
    p.add_argument("--m", default="suite", help='M values: "suite", "1,16,64" or "1:16384:x2"')
    p.add_argument("--replays", type=int, default=7, help="timed replays per candidate (median)")
    p.add_argument("--key-budget-ms", type=float, default=100.0, help="fp8gemm.tune budget per key")
    p.add_argument("--run-budget-ms", type=float, default=0.0,
                   help="fp8gemm.tune budget for the whole run (0: none); keys past it keep their default")
    p.add_argument("--cache", help="fp8gemm cache file: merged before tuning, saved after")
    p.add_argument("--csv", help="per-point results")
    p.add_argument("--md", help="markdown table of the results")
    p.add_argument("--skip-overhead", action="store_true")
    p.add_argument("--no-tune", action="store_true", help="time untuned auto only (the tuned column repeats it)")
    p.add_argument("--torch-fast-accum", type=int, choices=(0, 1), default=1,
                   help="torch._scaled_mm's use_fast_accum; 0 is how vLLM and SGLang call it (torch's default)")
    return p.parse_args()


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def m_range(m):
    return "M<=64" if m <= 64 else "64<M<=256" if m <= 256 else "M>256"


def random_fp8(*shape):
    x = torch.empty(shape, dtype=torch.bfloat16, device="cuda").normal_(0, 2)
    return x.to(E4M3)


class Point:
    """Inputs of one (shape, M): fresh A [1, m, k]; the shape's `copies` weights [n, k] (shared by
    its M values) total >= 2x L2."""

    def __init__(self, m, W, fast_accum=True):
        self.copies, self.n, self.k = W.shape
        self.fast_accum = fast_accum
        self.W = W
        self.A = random_fp8(1, m, self.k)
        self.sa = torch.tensor(0.5, device="cuda")
        self.sb = torch.tensor(0.25, device="cuda")

    def torch_call(self, i):
        return torch._scaled_mm(self.A[0], self.W[i % self.copies].t(), self.sa, self.sb, out_dtype=OUT,
                                use_fast_accum=self.fast_accum)

    def fp8gemm_call(self, i, backend="auto"):
        W = self.W[i % self.copies : i % self.copies + 1]
        return fp8gemm.bmm_fp8(self.A, W.transpose(-2, -1), self.sa, self.sb, OUT, backend=backend)


def eager_us(fn, reps=5):
    fn(0)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(reps):
        fn(i)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / reps


def capture(fn, calls, copies):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture, as torch's graph docs advise
        for i in range(min(copies, 3)):
            fn(i)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            fn(i)
    return graph


def time_graphs(graphs, calls, replays):
    """Round-robin: A B C A B C ...; one warm-up round; per-call median in us."""
    times = {name: [] for name in graphs}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(replays + 1):
        for name, g in graphs.items():
            start.record()
            g.replay()
            end.record()
            end.synchronize()
            if r:
                times[name].append(start.elapsed_time(end) * 1e3 / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def bench_point(pt, default_tactic, replays):
    t_est = eager_us(pt.torch_call)
    calls = max(3, min(20, math.ceil(1000.0 / max(t_est, 1e-3))))  # >= 20 short calls, >= 3 long ones
    fns = {"torch": pt.torch_call, "default": lambda i: pt.fp8gemm_call(i, default_tactic),
           "tuned": lambda i: pt.fp8gemm_call(i)}
    graphs = {name: capture(fn, calls, pt.copies) for name, fn in fns.items()}
    result = time_graphs(graphs, calls, replays)
    del graphs
    return result, calls


def host_overhead(reps=15, n=100):
    """Eager per-call host time (us): the GPU is held busy by a sleep kernel so calls only queue."""
    m, n_, k = 16, 4096, 4096
    a = (torch.randn(m, k, device="cuda")).to(E4M3)
    w = (torch.randn(n_, k, device="cuda")).to(E4M3)
    s = torch.tensor(1.0, device="cuda")
    a3, w3 = a.unsqueeze(0), w.unsqueeze(0)
    out = torch.empty(1, m, n_, dtype=OUT, device="cuda")
    op = torch.ops.fp8gemm.gemm_fp8.default
    fns = {
        "torch._scaled_mm": lambda: torch._scaled_mm(a, w.t(), s, s, out_dtype=OUT, use_fast_accum=True),
        "fp8gemm.bmm_fp8": lambda: fp8gemm.bmm_fp8(a3, w3.transpose(-2, -1), s, s, OUT),
        "fp8gemm.bmm_fp8(out=)": lambda: fp8gemm.bmm_fp8(a3, w3.transpose(-2, -1), s, s, OUT, out=out),
        "fp8gemm.gemm_fp8": lambda: fp8gemm.gemm_fp8(a, w.t(), s, s, OUT),
        "torch.ops.fp8gemm.gemm_fp8": lambda: op(a, w.t(), s, s, OUT, "auto"),
    }
    for fn in fns.values():
        for _ in range(5):
            fn()
    torch.cuda.synchronize()
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():  # round-robin
            torch.cuda._sleep(20_000_000)  # ~10 ms of GPU time: the host runs ahead
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t0) / n * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(t) for name, t in times.items()}


def main():
    args = parse_args()
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    print(f"# {props.name}, {props.multi_processor_count} SMs, L2 {l2 >> 20} MB; torch {torch.__version__}; "
          f"fp8gemm {fp8gemm.__version__} ({fp8gemm._library.path})", flush=True)
    print(f"# backends: {[(b['name'], b['available']) for b in fp8gemm.info()['backends']]}", flush=True)
    points = [(name, m, n, k) for name, n, k in shapes(args.models) for m in parse_m(args.m)]

    fp8gemm.clear_cache()  # "default" is what auto runs with no tuned entry (built-in table or cuBLASLt)
    defaults = {(m, n, k): fp8gemm.choose(m, n, k) for _, m, n, k in points}
    t0 = time.time()
    keys = sorted({(m, n, k) for _, m, n, k in points})
    decisions = [] if args.no_tune else fp8gemm.tune(keys, key_budget_ms=args.key_budget_ms,
                                                     run_budget_ms=args.run_budget_ms, cache=args.cache)
    print(f"# tuned {len(keys)} keys in {time.time() - t0:.0f} s ({sum(d['measured'] for d in decisions)} measured)",
          flush=True)

    rows = []
    header = f"{'shape':28} {'M':>6} {'N':>6} {'K':>6} {'torch us':>9} {'default':>9} {'tuned':>9} " \
             f"{'x default':>9} {'x tuned':>8}  tuned tactic"
    print(header, flush=True)
    W, W_shape = None, None
    for name, m, n, k in points:
        if W_shape != (n, k):
            W = None
            torch.cuda.empty_cache()
            W, W_shape = random_fp8(max(1, math.ceil(2 * l2 / (n * k))), n, k), (n, k)
        t, calls = bench_point(Point(m, W, bool(args.torch_fast_accum)), defaults[(m, n, k)], args.replays)
        row = dict(shape=name, M=m, N=n, K=k, calls=calls, torch_us=t["torch"], default_us=t["default"],
                   tuned_us=t["tuned"], x_default=t["torch"] / t["default"], x_tuned=t["torch"] / t["tuned"],
                   default_tactic=defaults[(m, n, k)], tuned_tactic=fp8gemm.choose(m, n, k))
        rows.append(row)
        print(f"{name:28} {m:6} {n:6} {k:6} {row['torch_us']:9.2f} {row['default_us']:9.2f} "
              f"{row['tuned_us']:9.2f} {row['x_default']:9.3f} {row['x_tuned']:8.3f}  {row['tuned_tactic']}",
              flush=True)

    summary = []
    for label in ("M<=64", "64<M<=256", "M>256", "all"):
        sel = [r for r in rows if label == "all" or m_range(r["M"]) == label]
        if sel:
            summary.append((label, len(sel), geomean([r["x_default"] for r in sel]),
                            geomean([r["x_tuned"] for r in sel]), min(r["x_tuned"] for r in sel)))
    overhead = {} if args.skip_overhead else host_overhead()

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    lines = ["| range | points | geomean torch/default | geomean torch/tuned | worst torch/tuned |",
             "|---|---|---|---|---|"]
    lines += [f"| {l} | {n} | {d:.3f} | {t:.3f} | {w:.3f} |" for l, n, d, t, w in summary]
    if overhead:
        base = overhead["torch._scaled_mm"]
        lines += ["", "| eager host overhead (m=16, n=k=4096) | us/call | x torch._scaled_mm |", "|---|---|---|"]
        lines += [f"| {name} | {us:.2f} | {us / base:.2f} |" for name, us in overhead.items()]
    if args.md:
        table = ["| shape | M | N | K | torch us | default us | tuned us | x default | x tuned | tuned tactic |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        table += [f"| {r['shape']} | {r['M']} | {r['N']} | {r['K']} | {r['torch_us']:.2f} | {r['default_us']:.2f} | "
                  f"{r['tuned_us']:.2f} | {r['x_default']:.3f} | {r['x_tuned']:.3f} | `{r['tuned_tactic']}` |"
                  for r in rows]
        Path(args.md).write_text("\n".join(lines + [""] + table) + "\n")
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
