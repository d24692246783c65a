"""vLLM plugin: fp8gemm runs vLLM's per-tensor FP8 linear layers on SM90.

Entry point `vllm.general_plugins` (pyproject.toml): vLLM calls `register` in every process
before it builds the model. It puts `Fp8gemmScaledMMLinearKernel` first in vLLM's CUDA FP8
scaled-mm kernel list (`_POSSIBLE_FP8_KERNELS`), so `choose_scaled_mm_linear_kernel` takes it
for every per-tensor FP8 layer (static or dynamic activation scale) on SM90 and the next kernel
elsewhere. Its `apply_weights` is one fp8gemm op: the activation quantization is fused and the
bias is added in the GEMM's epilogue. Before CUDA-graph capture the worker tunes the recorded
layer shapes (_common.warm_up). FP8GEMM_DISABLE=1 registers nothing;
VLLM_DISABLED_KERNELS=Fp8gemmScaledMMLinearKernel turns the kernel off through vLLM.
"""

from __future__ import annotations

import functools

import torch

from . import _common

KERNEL_NAME = "Fp8gemmScaledMMLinearKernel"
SM90 = 90


def register() -> None:
    """The plugin's entry point; vLLM may call it more than once per process."""
    if _common.disabled():
        return
    from vllm.model_executor.kernels.linear import _POSSIBLE_FP8_KERNELS
    from vllm.platforms import PlatformEnum

    kernels = _POSSIBLE_FP8_KERNELS[PlatformEnum.CUDA]
    if not any(k.__name__ == KERNEL_NAME for k in kernels):
        kernels.insert(0, kernel_class())


def is_supported(compute_capability=None):
    """(supported, reason) as vLLM's kernels answer: CUDA at compute capability 9.0 (fp8gemm's
    kernels and default table are SM90's). None asks the current platform, as vLLM's
    ScaledMMLinearKernel.__init__ does (`assert self.is_supported()[0]`)."""
    from vllm.platforms import current_platform

    if _common.disabled():
        return False, f"is off ({_common.DISABLE_ENV}=1)"
    if not current_platform.is_cuda():
        return False, "requires CUDA"
    if compute_capability is None:
        capability = current_platform.get_device_capability()
        if capability is None:
            return False, "found no CUDA device capability"
        compute_capability = capability.to_int()
    if compute_capability != SM90:
        return False, f"runs on SM90 (Hopper) only, where fp8gemm's kernels are; this device is SM{compute_capability}"
    return True, None


def can_implement(c):
    """(implementable, reason) for an FP8ScaledMMLinearLayerConfig: what fp8gemm's linear op runs
    (docs/linear.md "Arguments")."""
    act, weight = c.activation_quant_key, c.weight_quant_key
    per_tensor = all(key.scale.group_shape.is_per_tensor() and key.scale2 is None for key in (act, weight))
    if not per_tensor:
        return False, "runs one per-tensor scale for the activations and one for the weights only"
    if act.dtype != torch.float8_e4m3fn or weight.dtype != torch.float8_e4m3fn:
        return False, "runs e4m3 (float8_e4m3fn) activations and weights only"
    if not (act.symmetric and weight.symmetric):
        return False, "runs symmetric quantization only"
    if c.input_dtype not in _common.OUT_DTYPES:
        return False, f"quantizes bfloat16 or float16 activations only, got {c.input_dtype}"
    if c.out_dtype is not None and c.out_dtype not in _common.OUT_DTYPES:
        return False, f"writes bfloat16 or float16 outputs only, got {c.out_dtype}"
    n, k = c.weight_shape
    if n % 16 or k % 16:
        return False, f"needs N and K multiples of 16, got N={n} K={k}"
    return True, None


@functools.lru_cache(maxsize=None)
def kernel_class():
    """The kernel class, made on first use: its base class exists only where vLLM is installed."""
    from vllm.model_executor.kernels.linear.scaled_mm.ScaledMMLinearKernel import FP8ScaledMMLinearKernel
    from vllm.model_executor.layers.quantization.utils.layer_utils import replace_parameter

    class Fp8gemmScaledMMLinearKernel(FP8ScaledMMLinearKernel):
        """Per-tensor FP8 linear on fp8gemm's linear op (quantization fused, bias in the epilogue)."""

        @classmethod
        def is_supported(cls, compute_capability=None):
            return is_supported(compute_capability)

        @classmethod
        def can_implement(cls, c):
            return can_implement(c)

        def input_quant_key(self):
            # None: the activation arrives unquantized; fp8gemm's op quantizes it.
            return None

        def process_weights_after_loading(self, layer: torch.nn.Module) -> None:
            weight = layer.weight  # [k, n], W[n, k].t() after Fp8LinearMethod's processing
            if not weight.t().is_contiguous():  # padded (VLLM_FP8_PADDING): the op reads W[n, k] dense
                replace_parameter(layer, "weight", weight.t().contiguous().t())
            k, n = layer.weight.shape
            _common.record_layer(n, k, self.config.out_dtype or self.config.input_dtype,
                                 dynamic=getattr(layer, "input_scale", None) is None,
                                 bias=getattr(layer, "bias", None) is not None)
            install_warm_up()

        def apply_weights(self, layer, x, bias=None):
            weight, weight_scale, input_scale, _ = self._get_layer_params(layer)
            return _common.linear(x, weight, weight_scale, input_scale, bias, self.config.out_dtype or x.dtype)

        def apply_scaled_mm(self, *, A, B, out_dtype, As, Bs, bias, output_shape):
            # Only reached through the base class's apply_weights (not used here): a quantized A.
            return _common.gemm(A, B, As, Bs, out_dtype, bias).view(*output_shape)

    Fp8gemmScaledMMLinearKernel.__name__ = Fp8gemmScaledMMLinearKernel.__qualname__ = KERNEL_NAME
    return Fp8gemmScaledMMLinearKernel


def warm_up_worker(worker) -> list:
    """Tunes the recorded layers up to the scheduler's max_num_batched_tokens (the largest M a
    forward runs) with the tensor-parallel group (its gloo group: fp8gemm's exchange is host-side)."""
    group = None
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        from vllm.distributed.parallel_state import get_tp_group

        group = get_tp_group().cpu_group
    return _common.warm_up("vllm", int(worker.scheduler_config.max_num_batched_tokens), group=group)


@functools.lru_cache(maxsize=None)
def install_warm_up() -> None:
    """Runs warm_up_worker at the start of the GPU worker's compile_or_warm_up_model: after the
    weights are loaded and processed, before vLLM's own kernel warm-up and CUDA-graph capture.
    Installed from a worker (where the first fp8gemm layer is processed), once per process."""
    from vllm.v1.worker.gpu_worker import Worker

    original = Worker.compile_or_warm_up_model

    @functools.wraps(original)
    def compile_or_warm_up_model(self, *args, **kwargs):
        warm_up_worker(self)
        return original(self, *args, **kwargs)

    Worker.compile_or_warm_up_model = compile_or_warm_up_model
