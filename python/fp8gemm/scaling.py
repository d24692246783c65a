"""Per-tensor FP8 e4m3 quantization: the one rule fp8gemm.nn.Linear, quantize_ and the benchmarks
use for weights and activations.

    scale = max(amax(|x|), MIN_AMAX) / E4M3_MAX        x_fp8 = clamp(x / scale, -448, 448) in e4m3

All torch ops on the tensor's device, no host sync (no .item()), no branch on values: legal in
CUDA-graph capture and traceable by torch.compile(fullgraph=True).
"""

import torch

E4M3 = torch.float8_e4m3fn
E4M3_MAX = float(torch.finfo(E4M3).max)  # 448
# An all-zero tensor still gets a positive scale (its FP8 values are zeros): never a division by 0.
MIN_AMAX = 1e-12


def per_tensor_scale(x: torch.Tensor) -> torch.Tensor:
    """The 0-d float32 scale amax(|x|) / 448 (clamped away from 0), on x's device."""
    return x.abs().amax().float().clamp(min=MIN_AMAX) / E4M3_MAX


def quantize_e4m3(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x / scale in e4m3 (saturating at +-448), contiguous, the shape of x. Computed in float32."""
    return (x.float() / scale).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3).contiguous()


def quantize_per_tensor(x: torch.Tensor):
    """(x in e4m3, its 0-d float32 scale): dequantized, x_fp8.float() * scale ~ x."""
    scale = per_tensor_scale(x)
    return quantize_e4m3(x, scale), scale
