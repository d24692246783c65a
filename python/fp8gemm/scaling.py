"""Per-tensor FP8 e4m3 quantization: the one rule of fp8gemm's linear layer (docs/linear.md
"Numerics"), in torch ops. fp8gemm.quantize_fp8 and the layer's kernels compute it bit for bit; this
module is their reference, and quantizes weights (fp8gemm.nn.Linear.from_linear).

    scale = max(amax(|x|), MIN_AMAX) / E4M3_MAX        x_fp8 = clamp(x / scale, -448, 448) in e4m3

in float32, each operation rounded once, on every device. All torch ops on the tensor's device, no
host sync (no .item()), no branch on values: legal in CUDA-graph capture and traceable by
torch.compile(fullgraph=True).
"""

import torch

E4M3 = torch.float8_e4m3fn
E4M3_MAX = float(torch.finfo(E4M3).max)  # 448
# An all-zero tensor still gets a positive scale (its FP8 values are zeros): never a division by 0.
MIN_AMAX = 1e-12


def per_tensor_scale(x: torch.Tensor) -> torch.Tensor:
    """The 0-d float32 scale amax(|x|) / 448 (clamped away from 0), on x's device.

    The division is float32's, rounded once: computed in float64 and rounded to float32, which is
    the same value for every float32 amax (a / 448 = a / 7 / 64 never lies within float64's error
    of a float32 rounding boundary). `t / 448.0` would not do: on CUDA torch multiplies by a
    rounded 1/448 instead, which differs in the last bit for some amax."""
    amax = x.abs().amax().float().clamp(min=MIN_AMAX)
    return (amax.double() / E4M3_MAX).float()


def quantize_e4m3(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x / scale in e4m3 (saturating at +-448), contiguous, the shape of x. Computed in float32;
    scale is a tensor on x's device (a CPU number would make torch multiply by its reciprocal)."""
    return (x.float() / scale).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3).contiguous()


def quantize_per_tensor(x: torch.Tensor):
    """(x in e4m3, its 0-d float32 scale): dequantized, x_fp8.float() * scale ~ x."""
    scale = per_tensor_scale(x)
    return quantize_e4m3(x, scale), scale
