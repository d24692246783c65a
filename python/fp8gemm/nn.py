"""fp8gemm.nn.Linear: an inference linear layer, y = x @ W.T (+ bias), on fp8gemm's FP8 GEMM.

The weight is FP8 e4m3 [out_features, in_features] with one float32 scale; activations are
quantized to e4m3 per call with one scale per tensor, either static (calibrated: a buffer) or
dynamic (amax(|x|) / 448 of each call's input, computed on the GPU: no host sync). The GEMM is
torch.ops.fp8gemm.gemm_fp8 (its "auto" picks the tuned tactic per shape). The bias, when there
is one, is one add after the GEMM: the op has no bias argument, so no backend fuses it.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Optional, Union

import torch

from . import _log
from .scaling import E4M3, per_tensor_scale, quantize_e4m3, quantize_per_tensor

__all__ = ["Linear"]

OUT_DTYPES = (torch.bfloat16, torch.float16)
INPUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# The backends a Linear may name (as fp8gemm.bmm_fp8's `backend`); a full tactic name (with ':')
# is accepted as well.
_BACKENDS = ("auto", "cublaslt", "cublas", "cutlass", "small_m", "cudnn")

ActivationScale = Union[str, float, torch.Tensor]


def _check_features(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"fp8gemm.nn.Linear: {name} must be an int, got {type(value).__name__}")
    if value <= 0 or value % 16:
        raise ValueError(f"fp8gemm.nn.Linear: {name} must be a positive multiple of 16 (the FP8 GEMM's "
                         f"rule for n and k), got {value}")
    return value


def _check_out_dtype(out_dtype) -> torch.dtype:
    if out_dtype not in OUT_DTYPES:
        raise TypeError(f"fp8gemm.nn.Linear: out_dtype must be torch.bfloat16 or torch.float16, got {out_dtype}")
    return out_dtype


def _check_backend(backend) -> str:
    if not isinstance(backend, str) or not (backend in _BACKENDS or ":" in backend):
        raise ValueError(f"fp8gemm.nn.Linear: backend must be one of {', '.join(_BACKENDS)} or a tactic name "
                         f"from fp8gemm.choose, got {backend!r}")
    return backend


def _static_scale(activation_scale, device) -> Optional[torch.Tensor]:
    """The 0-d float32 buffer of a static scale; None for "dynamic"."""
    if isinstance(activation_scale, str):
        if activation_scale != "dynamic":
            raise ValueError('fp8gemm.nn.Linear: activation_scale must be "dynamic", a positive float or a '
                             f"one-element tensor, got {activation_scale!r}")
        return None
    if isinstance(activation_scale, torch.Tensor):
        if activation_scale.numel() != 1 or not activation_scale.is_floating_point():
            raise ValueError("fp8gemm.nn.Linear: an activation_scale tensor must be floating point with exactly "
                             f"one element, got {activation_scale.dtype} of shape {tuple(activation_scale.shape)}")
        return activation_scale.detach().to(device=device, dtype=torch.float32).reshape(())
    if isinstance(activation_scale, Real) and not isinstance(activation_scale, bool):
        value = float(activation_scale)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"fp8gemm.nn.Linear: a static activation_scale must be finite and > 0, got {value}")
        return torch.tensor(value, dtype=torch.float32, device=device)
    raise TypeError('fp8gemm.nn.Linear: activation_scale must be "dynamic", a float or a tensor, got '
                    f"{type(activation_scale).__name__}")


class Linear(torch.nn.Module):
    """y = x @ (weight_scale * weight).T (+ bias) with x quantized to e4m3 per tensor.

    Buffers (all in the state dict): ``weight`` float8_e4m3fn [out_features, in_features],
    ``weight_scale`` float32 0-d, ``input_scale`` float32 0-d (static activation scale only),
    ``bias`` [out_features] in out_dtype (when bias=True). Input: any leading dims, last dim
    in_features, bfloat16/float16/float32; output: the same leading dims, out_dtype.

    activation_scale: "dynamic" (per call: amax(|x|) / 448, on the GPU), or a static scale (a
    float or a one-element tensor, e.g. from calibration) that x is divided by before the cast.
    backend: as fp8gemm.bmm_fp8's ("auto" runs the tuned or default tactic of each shape).

    Moving the module (``.to(device)``, ``.cuda()``) moves its buffers; a dtype conversion
    (``.to(torch.bfloat16)``, ``.half()``) leaves them as they are, since the FP8 weight and
    float32 scales must keep their types (out_dtype is fixed at construction). Inference only:
    there is no backward.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, out_dtype: torch.dtype = torch.bfloat16,
                 activation_scale: ActivationScale = "dynamic", backend: str = "auto",
                 device: Optional[Union[str, torch.device]] = None):
        super().__init__()
        self.in_features = _check_features("in_features", in_features)
        self.out_features = _check_features("out_features", out_features)
        self.out_dtype = _check_out_dtype(out_dtype)
        self.backend = _check_backend(backend)
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=E4M3, device=device))
        self.register_buffer("weight_scale", torch.ones((), dtype=torch.float32, device=device))
        input_scale = _static_scale(activation_scale, device)
        self.register_buffer("input_scale", input_scale)  # None: dynamic
        self.register_buffer("bias", torch.zeros(out_features, dtype=out_dtype, device=device) if bias else None)

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, *, activation_scale: ActivationScale = "dynamic",
                    out_dtype: Optional[torch.dtype] = None, backend: str = "auto") -> "Linear":
        """An fp8gemm Linear holding `linear`'s weight quantized to e4m3 with one scale
        (amax(|W|) / 448) and its bias in out_dtype, on the weight's device. out_dtype defaults
        to the weight's dtype when that is bfloat16 or float16, else bfloat16."""
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError(f"fp8gemm.nn.Linear.from_linear: expected a torch.nn.Linear, got {type(linear).__name__}")
        w = linear.weight
        if w.dtype not in INPUT_DTYPES:
            raise TypeError("fp8gemm.nn.Linear.from_linear: the weight must be bfloat16, float16 or float32 "
                            f"(it is quantized to e4m3 here), got {w.dtype}")
        if out_dtype is None:
            out_dtype = w.dtype if w.dtype in OUT_DTYPES else torch.bfloat16
        layer = cls(linear.in_features, linear.out_features, bias=linear.bias is not None, out_dtype=out_dtype,
                    activation_scale=activation_scale, backend=backend, device=w.device)
        with torch.no_grad():
            q, scale = quantize_per_tensor(w.detach())
            layer.weight.copy_(q)
            layer.weight_scale.copy_(scale)
            if linear.bias is not None:
                layer.bias.copy_(linear.bias.detach())
        return layer

    @property
    def dynamic(self) -> bool:
        return self.input_scale is None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"fp8gemm.nn.Linear: input's last dim must be in_features={self.in_features}, "
                             f"got shape {tuple(x.shape)}")
        if x.dtype not in INPUT_DTYPES:
            raise TypeError(f"fp8gemm.nn.Linear: input must be bfloat16, float16 or float32, got {x.dtype}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if self.input_scale is not None:
            scale = self.input_scale
        elif x2.shape[0] > 0:
            scale = per_tensor_scale(x2)
        else:  # an empty input has no amax; any positive scale gives the same empty output
            scale = self.weight_scale
        if _log.log_choices:
            _log.log_choice(1, x2.shape[0], self.out_features, self.in_features, E4M3, E4M3, self.out_dtype,
                            self.backend)
        y = self._matmul(quantize_e4m3(x2, scale), scale)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)

    def _matmul(self, x_fp8: torch.Tensor, x_scale: torch.Tensor) -> torch.Tensor:
        """[m, out_features] = x_scale * weight_scale * x_fp8 @ weight.T (the one GEMM call; the
        benchmarks replace it to time another GEMM on the same quantized layer)."""
        return torch.ops.fp8gemm.gemm_fp8.default(x_fp8, self.weight.t(), x_scale, self.weight_scale, self.out_dtype,
                                                  self.backend)

    def _apply(self, fn, recurse=True):
        # A dtype conversion must not touch the FP8 weight or the float32 scales; a device move
        # applies as usual.
        def keep_dtype(t):
            applied = fn(t)
            return applied if applied.dtype == t.dtype else t.to(device=applied.device)

        return super()._apply(keep_dtype, recurse)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # Checkpoints store per-tensor scales as 0-d or [1]; both load into the 0-d buffers.
        for name in ("weight_scale", "input_scale"):
            key, buf = prefix + name, getattr(self, name)
            value = state_dict.get(key)
            if buf is not None and value is not None and value.numel() == 1 and value.shape != buf.shape:
                state_dict[key] = value.reshape(buf.shape)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def extra_repr(self) -> str:
        scale = "dynamic" if self.dynamic else "static"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"out_dtype={self.out_dtype}, activation_scale={scale}, backend={self.backend!r}")
