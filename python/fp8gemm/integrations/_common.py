"""What the vLLM and SGLang adapters share: the switch, the layers they route to fp8gemm, the op
calls in the engines' layouts, and warm-up tuning with its one log line per layer shape.

Both engines store a per-tensor FP8 weight as W[n, k].t() (a column-major [k, n] view) with one
float32 weight scale and, for static checkpoints, one float32 input scale; these functions take
the tensors as the engines hold them.
"""

from __future__ import annotations

import os
import threading
from typing import List, NamedTuple, Optional

import torch

from .. import _log
from .._log import logger
from ..nn import layer_spec

DISABLE_ENV = "FP8GEMM_DISABLE"
WARMUP_TUNE_ENV = "FP8GEMM_WARMUP_TUNE"
OUT_DTYPES = (torch.bfloat16, torch.float16)


def disabled() -> bool:
    """FP8GEMM_DISABLE=1 (any value but "" and "0"): the adapters register nothing and the
    engines run their own kernels."""
    return os.environ.get(DISABLE_ENV, "").strip() not in ("", "0")


def warmup_tuning_enabled() -> bool:
    """FP8GEMM_WARMUP_TUNE=0 skips tuning at warm-up (the cache and the default table still
    apply); anything else, or unset, tunes."""
    return os.environ.get(WARMUP_TUNE_ENV, "").strip() != "0"


class LayerShape(NamedTuple):
    """A layer as fp8gemm tunes it: its key is (N, K, out dtype, scale mode and bias)."""
    n: int
    k: int
    out_dtype: torch.dtype
    dynamic: bool
    bias: bool

    @property
    def layer(self) -> str:
        return layer_spec(self.dynamic, self.bias)


_lock = threading.Lock()
_recorded = {}  # LayerShape -> None, in the order the engine loaded them


def record_layer(n: int, k: int, out_dtype: torch.dtype, dynamic: bool, bias: bool) -> LayerShape:
    """Records a layer the adapter routes to fp8gemm, for warm_up; each shape is kept once."""
    shape = LayerShape(int(n), int(k), out_dtype, bool(dynamic), bool(bias))
    with _lock:
        _recorded.setdefault(shape, None)
    return shape


def recorded_layers() -> List[LayerShape]:
    with _lock:
        return list(_recorded)


def forget_layers() -> None:
    """Clears the recorded layers (a process that loads a second model)."""
    with _lock:
        _recorded.clear()


def is_fp8gemm_weight(weight: torch.Tensor) -> bool:
    """A weight fp8gemm's op takes as the engines store it: e4m3 [k, n] whose transpose is
    W[n, k] contiguous, n and k multiples of 16."""
    return (weight.dim() == 2 and weight.dtype == torch.float8_e4m3fn and weight.t().is_contiguous()
            and weight.shape[0] % 16 == 0 and weight.shape[1] % 16 == 0)


def is_one_scale(scale: Optional[torch.Tensor]) -> bool:
    return isinstance(scale, torch.Tensor) and scale.numel() == 1 and scale.dtype == torch.float32


def linear(x: torch.Tensor, weight_kn: torch.Tensor, weight_scale: torch.Tensor,
           input_scale: Optional[torch.Tensor], bias: Optional[torch.Tensor],
           out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """The engines' per-tensor FP8 linear layer as one fp8gemm op: x [..., k] bf16/fp16 is
    quantized inside the op (static with input_scale, dynamic per tensor without), multiplied by
    weight_kn ([k, n] column-major, the engines' layout) and the bias is added in the epilogue."""
    weight = weight_kn.t()
    out_dtype = out_dtype or x.dtype
    if input_scale is None:
        y, _ = torch.ops.fp8gemm.linear_fp8_dynamic.default(x.contiguous(), weight, weight_scale, bias, out_dtype,
                                                            "auto")
        return y
    return torch.ops.fp8gemm.linear_fp8.default(x.contiguous(), weight, weight_scale, input_scale, bias, out_dtype,
                                                "auto")


def gemm(a: torch.Tensor, b_kn: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor,
         out_dtype: torch.dtype, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """An already quantized activation a [m, k] times b_kn [k, n] column-major, as FlashInfer's
    bmm_fp8 without the batch; the bias (rare on this path) is one add after the GEMM."""
    out = torch.ops.fp8gemm.gemm_fp8.default(a, b_kn, a_scale, b_scale, out_dtype, "auto")
    return out if bias is None else out + bias


def is_fp8gemm_bmm(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor,
                   out_dtype: torch.dtype) -> bool:
    """A batched call fp8gemm's bmm_fp8 runs: a [b, m, k] e4m3 contiguous, b [b, k, n] e4m3
    column-major, one-element float32 scales, a bf16/fp16 output, n and k multiples of 16."""
    return (a.dim() == 3 and b.dim() == 3 and a.dtype == torch.float8_e4m3fn and b.dtype == torch.float8_e4m3fn
            and a.is_contiguous() and b.transpose(1, 2).is_contiguous() and a.shape[0] == b.shape[0]
            and a.shape[2] == b.shape[1] and a.shape[2] % 16 == 0 and b.shape[2] % 16 == 0
            and is_one_scale(a_scale) and is_one_scale(b_scale) and out_dtype in OUT_DTYPES)


def bmm(a: torch.Tensor, b: torch.Tensor, a_scale: torch.Tensor, b_scale: torch.Tensor, out_dtype: torch.dtype,
        out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """FlashInfer's bmm_fp8 call (the engines' batched MLA products) on fp8gemm's op."""
    if out is None:
        return torch.ops.fp8gemm.bmm_fp8.default(a, b, a_scale, b_scale, out_dtype, "auto")
    torch.ops.fp8gemm.bmm_fp8_out.default(a, b, a_scale, b_scale, out_dtype, out, "auto")
    return out


def describe(shape: LayerShape, max_tokens: int) -> str:
    """One line naming the tactic fp8gemm runs for the layer at decode (M = 1) and at the
    largest batch (M = max_tokens), as fp8gemm.choose answers for the layer's key now."""
    from .. import choose

    tactics = [f"m={m}: {choose(m, shape.n, shape.k, dtype=shape.out_dtype, layer=shape.layer)}"
               for m in dict.fromkeys((1, max_tokens))]
    dtype = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(shape.out_dtype, str(shape.out_dtype))
    return f"n={shape.n} k={shape.k} {dtype} {shape.layer} runs " + "; ".join(tactics)


def warm_up(engine: str, max_tokens: int, group=None) -> list:
    """What an adapter runs after the model is loaded and before CUDA graphs are captured: tunes
    every M bucket up to max_tokens (the engine's largest batch of tokens) for each recorded
    layer, with the tensor-parallel `group` (every rank ends with the same entries), into the
    default cache location (a second start finds the keys there and measures nothing), then logs
    one line per layer shape. Returns the tuning decisions. A failed tuning (a rank that does not
    answer, a GPU error) is logged as a warning and the engine starts on the defaults."""
    from .. import release_tuning_buffers
    from ..tuning import tune_layers

    layers = recorded_layers()
    if not layers:
        return []
    decisions = []
    if warmup_tuning_enabled():
        try:
            decisions = tune_layers([(s.n, s.k, s.out_dtype, s.layer) for s in layers], max_tokens, group=group)
        except Exception as e:  # an untuned key runs the default table: slower at worst, never wrong
            logger.warning("%s: warm-up tuning failed, fp8gemm runs its defaults for untuned keys: %s: %s", engine,
                           type(e).__name__, e)
        if torch.cuda.is_available():
            release_tuning_buffers()
    _log._ensure_visible()  # the engines configure their own loggers only
    for shape in layers:
        logger.info("%s: %s", engine, describe(shape, max_tokens))
    return decisions
