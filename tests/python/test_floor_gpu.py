"""fp8gemm's floor launches torch._scaled_mm's kernels (GPU; skipped without one).

The floor is what `auto` runs with no tuned entry and no table rule: cuBLASLt's heuristic asked
as torch._scaled_mm asks it (docs/cublaslt.md "The floor"). Here both calls are profiled with
torch.profiler on the same inputs and the CUDA kernels each launches per call must be the same
names, at the issue's shape (5120x20480, M = 64 and 128) and every DESIGN-suite layer at M = 1,
16, 128 and 1024. The floor is named as "cublaslt:heuristic" (the adaptive floor: the floor of
whatever problem it runs), so no tuned entry or table rule can stand in for it. `-s` prints the
table of both kernel lists and times.
"""

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import fp8gemm
from conftest import HAS_GPU
from fp8gemm.suite import shapes

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")

FLOOR = "cublaslt:heuristic"
REPS = 5
POINTS = [("issue42.5120x20480", 5120, 20480, m) for m in (64, 128)] + \
    [(name, n, k, m) for name, n, k in shapes("all") for m in (1, 16, 128, 1024)]


def kernels_per_call(fn):
    """[(kernel name, us per call)] of the CUDA kernels `fn` launches on every call, sorted."""
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.key_averages():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.count >= REPS:
            out += [(e.key, e.device_time_total / e.count)] * (e.count // REPS)
    return sorted(out)


def fp8_zeros(rows, cols):
    # The kernel choice depends on the shape alone: zeros are the quickest inputs to make.
    return torch.zeros(rows, cols, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)


def test_the_floor_runs_torch_scaled_mms_kernels():
    one = torch.ones((), device="cuda")
    rows, mismatches, weights = [], [], {}
    for name, n, k, m in POINTS:
        if (n, k) not in weights:
            weights.clear()  # one layer's weight at a time: the largest is 470 MB
            weights[(n, k)] = fp8_zeros(n, k)
        w, a = weights[(n, k)], fp8_zeros(m, k)
        torch_kernels = kernels_per_call(lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16,
                                                                  use_fast_accum=True))
        floor_kernels = kernels_per_call(lambda: fp8gemm.gemm_fp8(a, w.t(), one, one, torch.bfloat16, backend=FLOOR))
        same = [kn for kn, _ in torch_kernels] == [kn for kn, _ in floor_kernels]
        rows.append((name, m, n, k, torch_kernels, floor_kernels, same))
        if not same:
            mismatches.append(f"{name} M={m} N={n} K={k}: torch {[kn for kn, _ in torch_kernels]} "
                              f"floor {[kn for kn, _ in floor_kernels]}")
    print(f"\n{'shape':28} {'M':>5} {'N':>6} {'K':>6} {'torch us':>9} {'floor us':>9} same  kernels (torch | floor)")
    for name, m, n, k, tk, fk, same in rows:
        print(f"{name:28} {m:5} {n:6} {k:6} {sum(us for _, us in tk):9.2f} {sum(us for _, us in fk):9.2f} "
              f"{'yes ' if same else 'NO  '}  {' + '.join(kn[:70] for kn, _ in tk)} | "
              f"{'=' if same else ' + '.join(kn[:70] for kn, _ in fk)}")
    print(f"{len(rows) - len(mismatches)} of {len(rows)} points launch the same kernels")
    assert not mismatches, f"{len(mismatches)} of {len(rows)} points differ:\n" + "\n".join(mismatches)
