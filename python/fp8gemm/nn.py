"""fp8gemm.nn.Linear: an inference linear layer, y = x @ W.T (+ bias), on fp8gemm's FP8 linear op.

The weight is FP8 e4m3 [out_features, in_features] with one float32 scale; activations are
quantized to e4m3 per call with one scale per tensor, either static (calibrated: a buffer) or
dynamic (amax(|x|) / 448 of each call's input, computed on the GPU: no host sync). One op,
torch.ops.fp8gemm.linear_fp8, does the layer: fp8gemm's quantization kernel, then the GEMM "auto"
picks per shape with the bias in its epilogue (docs/linear.md). float32 inputs are cast to the
output dtype first (the op quantizes bf16/fp16 activations).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Optional, Union

import torch

from . import _backends, _log
from .scaling import E4M3, quantize_per_tensor

__all__ = ["Linear"]

OUT_DTYPES = (torch.bfloat16, torch.float16)
INPUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
# The backends a Linear may name (as fp8gemm.bmm_fp8's `backend`); a full tactic name (with ':')
# is accepted as well.
_BACKENDS = ("auto",) + _backends.SPELLINGS

ActivationScale = Union[str, float, torch.Tensor]


def layer_spec(dynamic: bool, bias: bool) -> str:
    """A layer's tuning key as fp8gemm.tune's `layer` spells it: its scale mode, "+bias" with one."""
    return ("dynamic" if dynamic else "static") + ("+bias" if bias else "")


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


def _check_fp8_weight(weight) -> None:
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"fp8gemm.nn.Linear.from_fp8: weight must be a tensor, got {type(weight).__name__}")
    if weight.dtype != E4M3:
        raise TypeError("fp8gemm.nn.Linear.from_fp8: weight must be torch.float8_e4m3fn (the FP8 weight as stored), "
                        f"got {weight.dtype}")
    if weight.dim() != 2:
        raise ValueError("fp8gemm.nn.Linear.from_fp8: weight must be 2-D [out_features, in_features], got shape "
                         f"{tuple(weight.shape)}")


def _one_scale(name: str, scale, device) -> torch.Tensor:
    """A checkpoint's per-tensor scale as the 0-d float32 buffer: the value is kept exactly
    (bfloat16 and float16 convert to float32 without rounding)."""
    if not isinstance(scale, torch.Tensor):
        raise TypeError(f"fp8gemm.nn.Linear.from_fp8: {name} must be a tensor, got {type(scale).__name__}")
    if scale.dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise TypeError(f"fp8gemm.nn.Linear.from_fp8: {name} must be float32, bfloat16 or float16, got {scale.dtype}")
    if scale.numel() != 1:
        raise ValueError(f"fp8gemm.nn.Linear.from_fp8: {name} must have exactly one element (a per-tensor scale), got "
                         f"shape {tuple(scale.shape)}: per-channel, per-token or block scales are not supported")
    scale = scale.detach().to(dtype=torch.float32).reshape(())
    if not scale.is_meta:
        value = float(scale)  # load time: one host read per scale
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"fp8gemm.nn.Linear.from_fp8: {name} must be finite and > 0, got {value}")
    return scale.to(device)


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

    @classmethod
    def from_fp8(cls, weight: torch.Tensor, weight_scale: torch.Tensor, input_scale: Optional[torch.Tensor] = None,
                 bias: Optional[torch.Tensor] = None, out_dtype: torch.dtype = torch.bfloat16,
                 backend: str = "auto") -> "Linear":
        """An fp8gemm Linear holding an FP8 checkpoint's tensors as stored (what
        fp8gemm.load_fp8_checkpoint builds): weight float8_e4m3fn [out_features, in_features], kept
        as it is (no copy when contiguous: no full-precision weight is ever made); weight_scale and
        input_scale one element each (0-d or [1], float32/bfloat16/float16; stored as float32 0-d),
        input_scale None for a dynamic activation scale; bias [out_features], cast to out_dtype.
        Everything lands on the weight's device. The conventions are ModelOpt's and
        compressed-tensors': weight ~ weight.float() * weight_scale, x_fp8 = e4m3(x / input_scale)."""
        _check_fp8_weight(weight)
        n, k = weight.shape
        weight_scale = _one_scale("weight_scale", weight_scale, weight.device)
        if input_scale is not None:
            input_scale = _one_scale("input_scale", input_scale, weight.device)
        if bias is not None:
            if not isinstance(bias, torch.Tensor) or bias.shape != (n,):
                raise ValueError(f"fp8gemm.nn.Linear.from_fp8: bias must be a tensor of shape [out_features] = [{n}], "
                                 f"got {tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__}")
            bias = bias.detach().to(device=weight.device, dtype=_check_out_dtype(out_dtype)).contiguous()
        # Built on meta (nothing allocated), then given the checkpoint's tensors as its buffers.
        layer = cls(k, n, bias=bias is not None, out_dtype=out_dtype,
                    activation_scale="dynamic" if input_scale is None else 1.0, backend=backend, device="meta")
        layer.weight = weight.detach().contiguous()
        layer.weight_scale = weight_scale
        layer.input_scale = input_scale
        layer.bias = bias
        return layer

    @property
    def dynamic(self) -> bool:
        return self.input_scale is None

    def _input(self, x: torch.Tensor) -> torch.Tensor:
        """x checked against the layer, float32 cast to out_dtype (the op quantizes bf16/fp16)."""
        if x.dim() == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"fp8gemm.nn.Linear: input's last dim must be in_features={self.in_features}, "
                             f"got shape {tuple(x.shape)}")
        if x.dtype not in INPUT_DTYPES:
            raise TypeError(f"fp8gemm.nn.Linear: input must be bfloat16, float16 or float32, got {x.dtype}")
        return x.to(self.out_dtype) if x.dtype == torch.float32 else x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self._input(x)
        if _log.log_choices and x.is_cuda:
            _log.log_choice(1, x.numel() // self.in_features, self.out_features, self.in_features, E4M3,
                            self.weight.dtype, self.out_dtype, self.backend,
                            layer_spec(self.dynamic, self.bias is not None))
        return torch.ops.fp8gemm.linear_fp8.default(x.contiguous(), self.weight, self.weight_scale, self.input_scale,
                                                    self.bias, self.out_dtype, self.backend)

    def _apply(self, fn, recurse=True):
        # A dtype conversion must not touch the FP8 weight or the float32 scales; a device move
        # applies as usual.
        def keep_dtype(t):
            applied = fn(t)
            return applied if applied.dtype == t.dtype else t.to(device=applied.device)

        return super()._apply(keep_dtype, recurse)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints store per-tensor scales as 0-d or [1]; both load into the 0-d buffers. A
        # scale with more elements, or a weight that is not e4m3 (copy_ would cast it without its
        # scale), is an error naming the rule instead of torch's size mismatch or a silent cast.
        for name in ("weight_scale", "input_scale"):
            key, buf = prefix + name, getattr(self, name)
            value = state_dict.get(key)
            if buf is None or value is None or value.shape == buf.shape:
                continue
            if value.numel() == 1:
                state_dict[key] = value.reshape(buf.shape)
            else:
                state_dict.pop(key)
                error_msgs.append(f"{key}: fp8gemm.nn.Linear holds one per-tensor scale, the state dict's has shape "
                                  f"{tuple(value.shape)} (per-channel, per-token or block scales are not supported)")
        weight = state_dict.get(prefix + "weight")
        if weight is not None and weight.dtype != self.weight.dtype:
            state_dict.pop(prefix + "weight")
            error_msgs.append(f"{prefix}weight: fp8gemm.nn.Linear's weight must be loaded as {self.weight.dtype}, got "
                              f"{weight.dtype} (a cast would drop its scale)")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self) -> str:
        scale = "dynamic" if self.dynamic else "static"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"out_dtype={self.out_dtype}, activation_scale={scale}, backend={self.backend!r}")
