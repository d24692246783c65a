"""The FP8 linear layer as torch users write it: the activations quantized per tensor with
fp8gemm.scaling's rule in torch ops, then torch._scaled_mm (cuBLASLt, fast accumulation) with the
bias as its bias argument, as vLLM's per-tensor FP8 path does. The benchmarks' torch contender:
the same FP8 weights and scales as fp8gemm's layer, so the two differ in the kernels alone.
"""

from __future__ import annotations

from typing import Optional

import torch

from fp8gemm.nn import Linear
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3


def linear(x: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor,
           input_scale: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
           out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """y = e4m3(x / s) @ weight.T * s * weight_scale (+ bias), as fp8gemm.linear_fp8 computes it.

    x [..., k] bf16/fp16; weight [n, k] e4m3 as stored; scales 0-d float32 on x's device.
    input_scale None: dynamic, s = fp8gemm.scaling.per_tensor_scale(x) (torch ops, no host
    sync: legal in CUDA-graph capture). out_dtype defaults to x's dtype."""
    n, k = weight.shape
    x2 = x.reshape(-1, k)
    if input_scale is None:
        # An empty x has no amax; any positive scale gives the same empty output.
        input_scale = per_tensor_scale(x2) if x2.shape[0] else weight_scale
    y = torch._scaled_mm(quantize_e4m3(x2, input_scale), weight.t(), input_scale, weight_scale, bias=bias,
                         out_dtype=out_dtype or x.dtype, use_fast_accum=True)
    return y.reshape(*x.shape[:-1], n)


class ScaledMMLinear(Linear):
    """fp8gemm.nn.Linear (same buffers, same state dict) whose forward is the torch reference
    above instead of torch.ops.fp8gemm.linear_fp8: a model swapped by fp8gemm.quantize_ runs on
    torch's kernels by changing its layers' class."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self._input(x)
        return linear(x.contiguous(), self.weight, self.weight_scale, self.input_scale, self.bias, self.out_dtype)


def to_torch_reference(model: torch.nn.Module) -> torch.nn.Module:
    """Every fp8gemm.nn.Linear of `model` (exactly that class) made a ScaledMMLinear, in place."""
    for module in model.modules():
        if type(module) is Linear:
            module.__class__ = ScaledMMLinear
    return model
