"""vLLM 0.34.0 scenarios, each run in its own process by test_vllm.py: the platform is faked as a
CUDA device of compute capability 9.0 (no GPU here) before vLLM's modules bind it; everything
else is vLLM's own code."""

import torch

E4M3 = torch.float8_e4m3fn


def fake_platform(capability=(9, 0)):
    """vLLM's current platform as a CUDA device of `capability`. vLLM's modules are imported first,
    on the real (CPU) platform: some compute constants at import through vLLM's CUDA extension,
    which cannot load without a GPU. The fake then replaces the platform object everywhere a
    module bound it."""
    import sys

    import vllm.platforms
    from vllm.platforms.interface import DeviceCapability, Platform, PlatformEnum

    real = vllm.platforms.current_platform
    import vllm.model_executor.kernels.linear  # noqa: F401
    import vllm.v1.worker.gpu_worker  # noqa: F401

    class FakeCuda(Platform):
        _enum = PlatformEnum.CUDA
        device_name = "cuda"
        device_type = "cuda"
        dispatch_key = "CUDA"

        @classmethod
        def get_device_capability(cls, device_id=0):
            return DeviceCapability(*capability)

        @classmethod
        def fp8_dtype(cls):
            return E4M3

    fake = FakeCuda()
    vllm.platforms.current_platform = fake
    # What vLLM's CUDA extension answers on SM90 for its own CUTLASS kernels (the next choice when
    # fp8gemm's class declines a layer); the extension itself does not load without a GPU.
    import vllm._custom_ops as ops

    ops.cutlass_scaled_mm_supports_fp8 = lambda cc: cc >= 89
    ops.cutlass_scaled_mm_supports_block_fp8 = lambda cc: cc >= 90
    for module in list(sys.modules.values()):
        if getattr(module, "current_platform", None) is real:
            module.current_platform = fake


def engine_config():
    """The config vLLM sets while it builds a model (its layers' kernels read it)."""
    from vllm.config import VllmConfig, set_current_vllm_config

    return set_current_vllm_config(VllmConfig())


def choose(activation: str) -> dict:
    """vLLM's init_fp8_linear_kernel for a per-tensor FP8 layer (bf16, N=1024, K=512) after the
    engine loaded its general plugins; the kernel list's head and the class chosen."""
    fake_platform()
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    from vllm.model_executor.kernels.linear import _POSSIBLE_FP8_KERNELS, init_fp8_linear_kernel
    from vllm.model_executor.layers.quantization.utils import quant_utils
    from vllm.platforms import PlatformEnum

    keys = {"static": quant_utils.kFp8StaticTensorSym, "dynamic": quant_utils.kFp8DynamicTensorSym,
            "per_token": quant_utils.kFp8DynamicTokenSym}
    with engine_config():
        kernel = init_fp8_linear_kernel(activation_quant_key=keys[activation],
                                        weight_quant_key=quant_utils.kFp8StaticTensorSym,
                                        input_dtype=torch.bfloat16, out_dtype=torch.bfloat16,
                                        weight_shape=(1024, 512), module_name="Fp8LinearMethod")
    return {"first": _POSSIBLE_FP8_KERNELS[PlatformEnum.CUDA][0].__name__, "chosen": type(kernel).__name__}


def is_supported() -> dict:
    """The class's answers with and without a capability (None asks the faked SM90 platform)."""
    fake_platform()
    from fp8gemm.integrations.vllm import kernel_class

    cls = kernel_class()
    return {"none": list(cls.is_supported()), "90": list(cls.is_supported(90)), "100": list(cls.is_supported(100)),
            "89": list(cls.is_supported(89))}


def apply_weights() -> dict:
    """The chosen kernel on a layer as Fp8LinearMethod leaves it (weight W[n, k].t(), 0-d scales),
    all on the meta device: process_weights_after_loading records the layer, apply_weights runs
    fp8gemm's op (its Meta implementation) through vLLM's call."""
    fake_platform()
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    from vllm.model_executor.kernels.linear import init_fp8_linear_kernel
    from vllm.model_executor.layers.quantization.utils import quant_utils

    from fp8gemm.integrations import _common

    results = {}
    for activation, key in (("static", quant_utils.kFp8StaticTensorSym), ("dynamic", quant_utils.kFp8DynamicTensorSym)):
        n, k = 1024, 512
        with engine_config():
            kernel = init_fp8_linear_kernel(activation_quant_key=key, weight_quant_key=quant_utils.kFp8StaticTensorSym,
                                            input_dtype=torch.bfloat16, out_dtype=torch.bfloat16, weight_shape=(n, k))
        layer = torch.nn.Module()
        layer.weight = torch.nn.Parameter(torch.empty(n, k, dtype=E4M3, device="meta").t(), requires_grad=False)
        layer.weight_scale = torch.nn.Parameter(torch.empty((), device="meta"), requires_grad=False)
        layer.input_scale = (torch.nn.Parameter(torch.empty((), device="meta"), requires_grad=False)
                             if activation == "static" else None)
        layer.bias = torch.nn.Parameter(torch.empty(n, dtype=torch.bfloat16, device="meta"), requires_grad=False)
        kernel.process_weights_after_loading(layer)
        x = torch.empty(3, 7, k, dtype=torch.bfloat16, device="meta")
        y = kernel.apply_weights(layer, x, layer.bias)
        results[activation] = {"kernel": type(kernel).__name__, "shape": list(y.shape), "dtype": str(y.dtype)}
    results["recorded"] = [[s.n, s.k, s.layer] for s in _common.recorded_layers()]
    results["warm_up_order"] = warm_up_order()
    return results


def warm_up_order() -> list:
    """vLLM's GPU worker's compile_or_warm_up_model, as the plugin left it, on a worker whose own
    warm-up and graph capture only say that they ran: fp8gemm's warm-up comes first, with vLLM's
    max_num_batched_tokens."""
    import contextlib
    from types import SimpleNamespace

    from vllm.v1.worker.gpu_worker import Worker

    from fp8gemm.integrations import _common

    calls = []
    _common.warm_up = lambda engine, max_tokens, group=None: calls.append(["fp8gemm warm_up", engine, max_tokens])

    class FakeWorker:
        scheduler_config = SimpleNamespace(max_num_batched_tokens=8192)
        model_runner = SimpleNamespace(eplb=SimpleNamespace(suppress=contextlib.nullcontext))

        def _compile_or_warm_up_model(self):
            calls.append(["vllm kernel warm-up and CUDA-graph capture"])

    Worker.compile_or_warm_up_model(FakeWorker())
    return calls
