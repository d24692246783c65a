#!/usr/bin/env python3
"""Tensor-parallel tuning on two GPUs: the same entries on every rank, and merge's time against one rank alone.

Every rank of a group ends with byte-identical cache entries (fp8gemm.tune(group=...)), and merge
should take about half the time of one rank tuning alone.

  NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \\
    python3 -m torch.distributed.run --standalone --nproc-per-node 2 bench/tp_tune.py [--models llama8b]

(scripts/gpu_tp_tune.sh runs it so.) One process per GPU, an NCCL group (the tune's exchanges go
over a gloo group of the same ranks that fp8gemm makes). After an untimed warm-up on every rank,
each run starts from an empty in-memory cache and measures every key again (retune):
  alone      rank 0 tunes every key by itself, no group (the others wait)
  merge      fp8gemm.tune(group=WORLD, strategy="merge"): each rank a share, then all gather
  broadcast  fp8gemm.tune(group=WORLD, strategy="broadcast"): rank 0 tunes, the others receive
Rank 0 prints one row per run: wall time (the slowest rank's), its ratio to alone, the keys each
rank tuned, and whether every rank's entries (export_entries) are byte-identical; --out gets each
rank's entries and summary.json. No cache file is read or written (FP8GEMM_CACHE=off). Exits 1
when a group run leaves the ranks with different entries.

The shared GPU machines require NVLink multicast off: NCCL_NVLS_ENABLE=0 and
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 must stay set; this script refuses to run without them.
"""

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path

os.environ["FP8GEMM_CACHE"] = "off"  # before fp8gemm loads: the runs start from nothing
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

if os.environ.get("FP8GEMM_TORCH_LIBRARY"):  # a development build: this checkout's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

REQUIRED_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="llama8b", help="model presets of fp8gemm.suite (comma-separated)")
    p.add_argument("--max-tokens", type=int, default=16384, help="tune every M bucket up to this M")
    p.add_argument("--key-budget-ms", type=float, default=100.0)
    p.add_argument("--runs", default="alone,merge,broadcast", help="which runs, in order")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds a rank waits for the others per step")
    p.add_argument("--backend", default="nccl", choices=["nccl", "gloo"],
                   help="the group's backend (gloo: e.g. two ranks on one GPU for a smoke test; times mean nothing)")
    p.add_argument("--out", default=os.environ.get("OUT", "tp-tune-out"), help="directory for entries and summary.json")
    return p.parse_args()


def main():
    args = parse_args()
    wrong = {k: os.environ.get(k) for k, v in REQUIRED_ENV.items() if os.environ.get(k) != v}
    if wrong:
        sys.exit(f"tp_tune: set {' '.join(f'{k}={v}' for k, v in REQUIRED_ENV.items())} (NVLink multicast stays off "
                 f"on these machines); found {wrong}")
    if not torch.cuda.is_available():
        sys.exit("tp_tune: needs a CUDA GPU per rank (torch.cuda.is_available() is False)")
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group(args.backend, **({"device_id": device} if args.backend == "nccl" else {}))
    import fp8gemm
    from fp8gemm import suite, tuning

    rank, size, world = dist.get_rank(), dist.get_world_size(), dist.group.WORLD
    shapes = [(m, n, k) for _, n, k in suite.shapes(args.models) for m in tuning.m_buckets(args.max_tokens)]
    options = dict(key_budget_ms=args.key_budget_ms, retune=True)
    fp8gemm.tune([(16, 1024, 1024)], key_budget_ms=10)  # warm-up: handles, the timer, the clocks
    dist.barrier()

    rows, out = [], Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for run in args.runs.split(","):
        fp8gemm.clear_cache()
        dist.barrier()
        start = time.perf_counter()
        if run == "alone":
            decisions = fp8gemm.tune(shapes, **options) if rank == 0 else []
        else:
            decisions = fp8gemm.tune(shapes, group=world, strategy=run, timeout=args.timeout, **options)
        elapsed = time.perf_counter() - start
        keys = sorted({d["key"] for d in decisions})
        text = fp8gemm.export_entries(keys) if decisions else ""
        gathered = [None] * size
        dist.all_gather_object(gathered, {"elapsed": elapsed, "text": text,
                                          "owners": [d.get("tuned_on_rank", 0) for d in decisions]})
        (out / f"{run}-rank{rank}.json").write_text(text)
        if rank == 0:
            texts = [g["text"] for g in gathered]
            per_rank = collections.Counter(o for o in gathered[0]["owners"])
            rows.append({"run": run, "ranks": 1 if run == "alone" else size,
                         "wall_s": max(g["elapsed"] for g in gathered), "keys": len(keys),
                         "entries": len(json.loads(text)["entries"]) if text else 0,
                         "tuned_per_rank": [per_rank.get(r, 0) for r in range(1 if run == "alone" else size)],
                         "identical": None if run == "alone" else len(set(texts)) == 1})
    if rank == 0:
        report(rows, shapes, args, out, torch.cuda.get_device_name(device))
    dist.barrier()
    ok = all(r["identical"] is not False for r in rows) if rank == 0 else True
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


def report(rows, shapes, args, out, gpu):
    alone = next((r["wall_s"] for r in rows if r["run"] == "alone"), None)
    identical = {None: "-", True: "yes", False: "NO"}
    print(f"{gpu} x {max(r['ranks'] for r in rows)}: {args.models}, {len(shapes)} keys (M buckets up to "
          f"{args.max_tokens}), key budget {args.key_budget_ms:g} ms, every key measured again in each run")
    print(f"{'run':<10} {'ranks':>5} {'wall s':>8} {'x alone':>8}  {'keys tuned per rank':<20} {'entries':>7}"
          "  identical")
    for r in rows:
        ratio = f"{r['wall_s'] / alone:.2f}" if alone else "-"
        print(f"{r['run']:<10} {r['ranks']:>5} {r['wall_s']:>8.1f} {ratio:>8}  "
              f"{'/'.join(map(str, r['tuned_per_rank'])):<20} {r['entries']:>7}  {identical[r['identical']]}")
    (out / "summary.json").write_text(json.dumps({"gpu": gpu, "models": args.models, "keys": len(shapes),
                                                  "key_budget_ms": args.key_budget_ms, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
