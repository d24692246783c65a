"""SGLang plugin: fp8gemm runs SGLang's per-tensor FP8 linear paths on SM90.

Entry point `sglang.srt.plugins` (pyproject.toml): SGLang's `load_plugins` calls `register` in
every process, then applies the hooks it registered through SGLang's HookRegistry (which also
rebinds names other modules imported). On SM90 only (elsewhere fp8gemm has no default table),
register routes to fp8gemm's ops:
  - `fp8_utils.apply_fp8_linear_bmm_flashinfer` (ModelOpt per-tensor FP8: FlashInfer's bmm_fp8
    after SGLang's static quantization) -> one linear op, quantization and bias included;
  - `fp8_utils.flashinfer_bmm_fp8` (where SGLang defined it: FlashInfer installed) -> gemm_fp8;
  - `fp8_utils.apply_fp8_linear` with a static per-tensor input scale and one weight scale
    (compressed-tensors' per-tensor W8A8 FP8, which SGLang runs on torch._scaled_mm) -> the linear
    op; every other call (per-token, per-channel, pre-quantized input) goes on to SGLang's code;
  - `sglang.kernels.ops.gemm.bmm_fp8` (the MLA models' batched products) -> fp8gemm's bmm_fp8
    where the operands are in its layout, else SGLang's;
  - `ModelRunner.load_model`: afterwards, the layers above are recorded and tuned (_common.warm_up),
    before SGLang sizes its memory pools and captures CUDA graphs.
FP8GEMM_DISABLE=1 registers nothing; SGLANG_PLUGINS (a list of plugin names) can leave it out.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _common

FP8_UTILS = "sglang.srt.layers.quantization.fp8_utils"
BMM_FP8 = "sglang.kernels.ops.gemm.bmm_fp8"
LOAD_MODEL = "sglang.srt.model_executor.model_runner.ModelRunner.load_model"


def on_sm90() -> bool:
    """SGLang's own answer (its platform context, which tests can override)."""
    from sglang.srt.runtime_context import get_platform

    return bool(get_platform().is_sm90)


def register() -> None:
    """The plugin's entry point: registers the hooks (SGLang applies them after every plugin ran)."""
    if _common.disabled() or not on_sm90():
        return
    import importlib

    from sglang.srt.plugins.hook_registry import HookRegistry, HookType

    HookRegistry.register(f"{FP8_UTILS}.apply_fp8_linear_bmm_flashinfer", apply_fp8_linear_bmm_flashinfer,
                          HookType.REPLACE)
    HookRegistry.register(f"{FP8_UTILS}.apply_fp8_linear", apply_fp8_linear, HookType.AROUND)
    if hasattr(importlib.import_module(FP8_UTILS), "flashinfer_bmm_fp8"):
        HookRegistry.register(f"{FP8_UTILS}.flashinfer_bmm_fp8", flashinfer_bmm_fp8, HookType.REPLACE)
    HookRegistry.register(BMM_FP8, bmm_fp8, HookType.AROUND)
    HookRegistry.register(LOAD_MODEL, after_load_model, HookType.AFTER)


def apply_fp8_linear_bmm_flashinfer(input: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor,
                                    input_scale: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """SGLang's static per-tensor path (weight [k, n] column-major, one scale each) as one op."""
    return _common.linear(input, weight, weight_scale, input_scale, bias)


def flashinfer_bmm_fp8(q_input: torch.Tensor, weight: torch.Tensor, x_scale: torch.Tensor,
                       weight_scale: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """SGLang's wrapper of FlashInfer's bmm_fp8 for a quantized [m, k] activation."""
    return _common.gemm(q_input, weight, x_scale, weight_scale, out_dtype)


def runs_on_fp8gemm(input: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor,
                    input_scale: Optional[torch.Tensor]) -> bool:
    """An apply_fp8_linear call fp8gemm's linear op computes the same way: bf16/fp16 input, a
    static per-tensor input scale, one weight scale, the weight in fp8gemm's layout."""
    return (input.dtype in _common.OUT_DTYPES and _common.is_one_scale(input_scale)
            and _common.is_one_scale(weight_scale) and _common.is_fp8gemm_weight(weight)
            and input.shape[-1] == weight.shape[0])


def apply_fp8_linear(original, input, weight, weight_scale, input_scale=None, *args, **kwargs):
    """AROUND hook on apply_fp8_linear: the static per-tensor case on fp8gemm, the rest unchanged."""
    if args or not runs_on_fp8gemm(input, weight, weight_scale, input_scale):
        return original(input, weight, weight_scale, input_scale, *args, **kwargs)
    return _common.linear(input, weight, weight_scale, input_scale, kwargs.get("bias"))


def bmm_fp8(original, A, B, A_scale, B_scale, dtype, out=None):
    """AROUND hook on SGLang's bmm_fp8: fp8gemm's bmm_fp8 where the operands are in its layout."""
    if not _common.is_fp8gemm_bmm(A, B, A_scale, B_scale, dtype):
        return original(A, B, A_scale, B_scale, dtype, out)
    return _common.bmm(A, B, A_scale, B_scale, dtype, out)


def record_model_layers(model: torch.nn.Module, out_dtype: torch.dtype) -> int:
    """Records every layer whose weights the hooks route to fp8gemm (the predicate of
    runs_on_fp8gemm on the loaded parameters); returns how many were found."""
    found = 0
    for module in model.modules():
        weight = getattr(module, "weight", None)
        input_scale = getattr(module, "input_scale", None)
        if not (isinstance(weight, torch.Tensor) and _common.is_fp8gemm_weight(weight)
                and _common.is_one_scale(getattr(module, "weight_scale", None)) and _common.is_one_scale(input_scale)):
            continue
        k, n = weight.shape
        _common.record_layer(n, k, out_dtype, dynamic=False, bias=getattr(module, "bias", None) is not None)
        found += 1
    return found


def max_batched_tokens() -> int:
    """The most tokens one forward runs: SGLang's prefill budget (max_prefill_tokens) or its chunk
    size, whichever is larger."""
    from sglang.srt.runtime_context import get_schedule

    schedule = get_schedule()
    return max(int(schedule.chunked_prefill_size or 0), int(schedule.max_prefill_tokens or 0), 1)


def after_load_model(result, runner, *args, **kwargs):
    """AFTER hook on ModelRunner.load_model: records the model's fp8gemm layers and tunes them with
    the tensor-parallel group (its gloo group) before memory sizing and graph capture."""
    if not record_model_layers(runner.model, runner.model_config.dtype):
        return result
    group = None
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        from sglang.srt.distributed.parallel_state import get_tp_group

        group = get_tp_group().cpu_group
    _common.warm_up("sglang", max_batched_tokens(), group=group)
    return result
