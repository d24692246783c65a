"""The contenders of the layer benchmark (fp8gemm/bench/layer.py): what one linear layer of the
step runs, bf16 activations in and bf16 out, on the same FP8 weights and scales for every FP8
contender. Each contender makes, outside the graph, a call for one weight copy and one input;
the benchmark captures a step's calls in one CUDA graph.

fbgemm's ops (fbgemm-gpu-genai, `import fbgemm_gpu.experimental.gen_ai` registers them; the
signatures are those of its src/quantize/quantize_defs.cpp at v1.6.0, used as in its
bench/quantize_ops.py):
  quantize_fp8_per_tensor(x) -> [x_fp8, scale]     scale = max(amax, eps) / 448, x_fp8 = x / scale
  quantize_fp8_per_tensor_fixed_scale(x, scale) -> x_fp8
  quantize_fp8_per_row(x) -> [x_fp8, row scales [m]]
  f8f8bf16(XQ [m, k], WQ [n, k], scale, use_fast_accum=True)   scale: one tensor, x_scale * w_scale
  f8f8bf16_lite(XQ, WQ, scale)                                 M <= 4 (it refuses more)
  fp8fp8bf16_fast_gemv(X, W, x_scale [m], w_scale [n])         M <= 4, row-wise scales, GEMM only
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .torch_ref import linear as torch_linear

OUT = torch.bfloat16
Call = Callable[[], torch.Tensor]


@dataclass
class WeightCopy:
    """One linear's weight in one decoder layer: e4m3 [n, k] with its 0-d float32 scale (its own
    allocation: cuBLASLt wants 16-byte aligned scales), and the same values dequantized to bf16."""
    fp8: torch.Tensor
    scale: torch.Tensor
    bf16: torch.Tensor
    _rows: Optional[torch.Tensor] = field(default=None, repr=False)

    def scale_rows(self) -> torch.Tensor:
        """[n] float32: the per-tensor scale once per row (fbgemm's GEMV reads row-wise scales)."""
        if self._rows is None:
            self._rows = self.scale.reshape(1).expand(self.fp8.shape[0]).contiguous()
        return self._rows


@dataclass
class Activation:
    """A bf16 [m, k] input, its static scale (per_tensor_scale of it, computed once: a scale that
    fits the activations, as calibration gives) and the input quantized once with it (the ceiling's
    pre-quantized activations)."""
    x: torch.Tensor
    scale: torch.Tensor
    fp8: torch.Tensor


@dataclass(frozen=True)
class Contender:
    name: str
    family: str  # bf16, torch, fbgemm, fp8gemm
    mode: str  # "-" (bf16), static, dynamic, gemm (pre-quantized input: no quantization in the step)
    what: str
    make: Callable[[WeightCopy, Activation], Call]
    max_m: Optional[int] = None  # the kernel refuses larger M


def _bf16(w: WeightCopy, a: Activation) -> Call:
    return lambda: torch.nn.functional.linear(a.x, w.bf16)


def _torch_static(w: WeightCopy, a: Activation) -> Call:
    return lambda: torch_linear(a.x, w.fp8, w.scale, a.scale, out_dtype=OUT)


def _torch_dynamic(w: WeightCopy, a: Activation) -> Call:
    return lambda: torch_linear(a.x, w.fp8, w.scale, None, out_dtype=OUT)


def _fbgemm_static(w: WeightCopy, a: Activation) -> Call:
    ops = torch.ops.fbgemm
    quantize, gemm, scale = ops.quantize_fp8_per_tensor_fixed_scale, ops.f8f8bf16, a.scale * w.scale
    return lambda: gemm(quantize(a.x, a.scale), w.fp8, scale)


def _fbgemm_dynamic_with(gemm_name: str):
    def make(w: WeightCopy, a: Activation) -> Call:
        quantize, gemm = torch.ops.fbgemm.quantize_fp8_per_tensor, getattr(torch.ops.fbgemm, gemm_name)

        def call():
            xq, x_scale = quantize(a.x)
            return gemm(xq, w.fp8, x_scale * w.scale)
        return call
    return make


def _fbgemm_gemv(w: WeightCopy, a: Activation) -> Call:
    quantize, gemv, w_rows = torch.ops.fbgemm.quantize_fp8_per_row, torch.ops.fbgemm.fp8fp8bf16_fast_gemv, w.scale_rows()

    def call():
        xq, x_rows = quantize(a.x)
        return gemv(xq, w.fp8, x_rows, w_rows)
    return call


def _fp8gemm(static: bool):
    def make(w: WeightCopy, a: Activation) -> Call:
        op, scale = torch.ops.fp8gemm.linear_fp8.default, (a.scale if static else None)
        return lambda: op(a.x, w.fp8, w.scale, scale, None, OUT, "auto")
    return make


def _fp8gemm_gemm(w: WeightCopy, a: Activation) -> Call:
    op = torch.ops.fp8gemm.gemm_fp8.default
    return lambda: op(a.fp8, w.fp8.t(), a.scale, w.scale, OUT, "auto")


CONTENDERS: Tuple[Contender, ...] = (
    Contender("bf16", "bf16", "-", "F.linear on the dequantized weights in bf16 (cuBLAS)", _bf16),
    Contender("torch_fp8_static", "torch", "static",
              "fp8gemm.scaling.quantize_e4m3 (torch ops) + torch._scaled_mm(use_fast_accum=True)", _torch_static),
    Contender("torch_fp8_dynamic", "torch", "dynamic",
              "fp8gemm.scaling.per_tensor_scale + quantize_e4m3 (torch ops) + torch._scaled_mm", _torch_dynamic),
    Contender("fbgemm_static", "fbgemm", "static",
              "fbgemm quantize_fp8_per_tensor_fixed_scale + f8f8bf16 (x_scale * w_scale made once)", _fbgemm_static),
    Contender("fbgemm_dynamic", "fbgemm", "dynamic",
              "fbgemm quantize_fp8_per_tensor + f8f8bf16 (scale product per call)", _fbgemm_dynamic_with("f8f8bf16")),
    Contender("fbgemm_lite", "fbgemm", "dynamic", "fbgemm quantize_fp8_per_tensor + f8f8bf16_lite (M <= 4)",
              _fbgemm_dynamic_with("f8f8bf16_lite"), max_m=4),
    Contender("fbgemm_gemv", "fbgemm", "dynamic",
              "fbgemm quantize_fp8_per_row (row-wise dynamic activation scales, the GEMV's own mode) + "
              "fp8fp8bf16_fast_gemv (GEMM only; the weight's per-tensor scale given per row) (M <= 4)",
              _fbgemm_gemv, max_m=4),
    Contender("fp8gemm_static", "fp8gemm", "static", "torch.ops.fp8gemm.linear_fp8 with input_scale",
              _fp8gemm(True)),
    Contender("fp8gemm_dynamic", "fp8gemm", "dynamic", "torch.ops.fp8gemm.linear_fp8 without input_scale",
              _fp8gemm(False)),
    Contender("fp8gemm_gemm", "fp8gemm", "gemm",
              "torch.ops.fp8gemm.gemm_fp8 on activations quantized once outside the graph (the ceiling)",
              _fp8gemm_gemm),
)
BY_NAME: Dict[str, Contender] = {c.name: c for c in CONTENDERS}
FBGEMM_OPS = {"fbgemm_static": ("quantize_fp8_per_tensor_fixed_scale", "f8f8bf16"),
              "fbgemm_dynamic": ("quantize_fp8_per_tensor", "f8f8bf16"),
              "fbgemm_lite": ("quantize_fp8_per_tensor", "f8f8bf16_lite"),
              "fbgemm_gemv": ("quantize_fp8_per_row", "fp8fp8bf16_fast_gemv")}


def select(spec: Optional[str]) -> List[Contender]:
    """The contenders of --contenders (comma-separated names; None: all), in the table's order;
    bf16 is always there (every ratio is against it)."""
    if not spec:
        return list(CONTENDERS)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"--contenders: unknown {', '.join(unknown)}; expected some of {', '.join(BY_NAME)}")
    return [c for c in CONTENDERS if c.name == "bf16" or c.name in names]


def fbgemm_status() -> Tuple[bool, str]:
    """(importable, a line saying which fbgemm-gpu-genai or why not). Imports it: GPU runs only."""
    try:
        import fbgemm_gpu.experimental.gen_ai  # noqa: F401  (registers torch.ops.fbgemm.*)
    except Exception as e:  # an ImportError, or a missing symbol / CUDA mismatch in its .so
        return False, f"fbgemm-gpu-genai not importable ({type(e).__name__}: {str(e).splitlines()[0][:160]})"
    try:
        from importlib.metadata import version

        return True, f"fbgemm-gpu-genai {version('fbgemm-gpu-genai')}"
    except Exception:
        return True, "fbgemm_gpu.experimental.gen_ai (version unknown)"


def missing_fbgemm_ops(contenders: Sequence[Contender]) -> Dict[str, str]:
    """{contender: why it cannot run} for fbgemm contenders whose ops this fbgemm lacks."""
    missing = {}
    for c in contenders:
        lacking = [op for op in FBGEMM_OPS.get(c.name, ()) if not hasattr(torch.ops.fbgemm, op)]
        if lacking:
            missing[c.name] = f"torch.ops.fbgemm has no {', '.join(lacking)}"
    return missing
