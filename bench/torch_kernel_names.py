#!/usr/bin/env python3
"""Which GPU kernels torch._scaled_mm, fp8gemm's floor and fp8gemm's auto launch for given shapes,
and their times (torch.profiler, CUDA activity). The floor ("cublaslt:heuristic": cuBLASLt's
heuristic asked as torch._scaled_mm asks it) should launch torch's kernels;
tests/python/test_floor_gpu.py asserts that over the DESIGN suite.

    FP8GEMM_TORCH_LIBRARY=.../libfp8gemm_torch.so python3 bench/torch_kernel_names.py 96,4096,21504 ...

Each argument is M,N,K (FP8 e4m3 x e4m3 -> bf16, per-tensor scales 1).
"""
import os
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

if os.environ.get("FP8GEMM_TORCH_LIBRARY"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import fp8gemm  # noqa: E402


def kernels(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.key_averages():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.count >= reps:
            out.append((e.key, e.device_time_total / e.count))
    return out


def main():
    for arg in sys.argv[1:] or ["96,4096,21504"]:
        m, n, k = (int(x) for x in arg.split(","))
        a = (torch.randn(m, k, device="cuda") / 4).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, device="cuda") / 4).to(torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        print(f"== M={m} N={n} K={k}")
        for name, fn in [
            ("torch._scaled_mm", lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16,
                                                          use_fast_accum=True)),
            ("fp8gemm floor (cublaslt:heuristic)",
             lambda: fp8gemm.bmm_fp8(a[None], w.t()[None], one, one, torch.bfloat16, backend="cublaslt:heuristic")),
            (f"fp8gemm auto ({fp8gemm.choose(m, n, k)})",
             lambda: fp8gemm.bmm_fp8(a[None], w.t()[None], one, one, torch.bfloat16)),
        ]:
            for kernel, us in kernels(fn):
                print(f"  {name[:90]:90} {us:8.2f} us  {kernel[:160]}")


if __name__ == "__main__":
    main()
