"""SGLang 0.5.23 scenarios, each run in its own process by test_sglang.py: SGLang's load_plugins
applies fp8gemm's hooks (on a platform SGLang's own override calls SM90, there is no GPU here),
then the engine's FP8 linear entry points are called on meta tensors. SGLang's own kernels cannot
run on meta tensors (or without a GPU), so a call that returns a meta tensor ran fp8gemm's op."""

import importlib

import torch

E4M3 = torch.float8_e4m3fn
FP8_UTILS = "sglang.srt.layers.quantization.fp8_utils"
META = dict(device="meta")


def load(sm90: bool) -> None:
    from sglang.srt.plugins import load_plugins
    from sglang.srt.runtime_context import override_platform

    with override_platform(is_sm90=sm90):
        load_plugins()


def per_tensor_layer(n=1024, k=512, bias=True):
    """A layer as SGLang's per-tensor FP8 methods leave it: weight W[n, k].t(), 0-d scales."""
    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(torch.empty(n, k, dtype=E4M3, **META).t(), requires_grad=False)
    layer.weight_scale = torch.nn.Parameter(torch.empty((), **META), requires_grad=False)
    layer.input_scale = torch.nn.Parameter(torch.empty((), **META), requires_grad=False)
    layer.bias = torch.nn.Parameter(torch.empty(n, dtype=torch.bfloat16, **META), requires_grad=False)
    return layer


def outcome(call) -> str:
    """"fp8gemm <op> [shape]" when the call went through the adapter's op call (recorded) and
    returned a meta tensor, else what SGLang's own path did."""
    from fp8gemm.integrations import _common

    seen = []
    originals = {name: getattr(_common, name) for name in ("linear", "gemm", "bmm")}

    def recording(name):
        def call_op(*args, **kwargs):
            seen.append(name)
            return originals[name](*args, **kwargs)
        return call_op

    for name in originals:
        setattr(_common, name, recording(name))
    try:
        y = call()
    except Exception as e:  # SGLang's own kernels: no GPU, no FlashInfer here
        return f"engine: {type(e).__name__}"
    finally:
        for name, fn in originals.items():
            setattr(_common, name, fn)
    if seen and isinstance(y, torch.Tensor) and y.is_meta:
        return f"fp8gemm {seen[0]} {list(y.shape)}"
    return "engine"


def entry_points(sm90: bool = True) -> dict:
    load(sm90)
    from sglang.srt.layers.quantization import modelopt_quant
    from sglang.srt.layers.quantization.compressed_tensors.schemes import compressed_tensors_w8a8_fp8 as ct
    from sglang.srt.model_executor.model_runner import ModelRunner
    from sglang.srt.plugins.hook_registry import HookRegistry

    fp8_utils = importlib.import_module(FP8_UTILS)
    gemm_ops = importlib.import_module("sglang.kernels.ops.gemm")
    layer = per_tensor_layer()
    x = torch.empty(3, 7, 512, dtype=torch.bfloat16, **META)

    # ModelOpt's per-tensor FP8 method, as it calls the FlashInfer path.
    modelopt = object.__new__(modelopt_quant.ModelOptFp8LinearMethod)
    modelopt.use_marlin, modelopt.use_sm120_fp8 = False, False
    layer.use_flashinfer_bmm = True
    # compressed-tensors' W8A8 FP8 scheme, per-tensor weights and a static input scale.
    scheme = object.__new__(ct.CompressedTensorsW8A8Fp8)
    scheme.weight_block_size, scheme.strategy = None, "tensor"
    a = torch.empty(16, 7, 128, dtype=E4M3, **META)
    b = torch.empty(16, 512, 128, dtype=E4M3, **META).transpose(1, 2)
    one = torch.empty(1, **META)
    return {
        "patched": sorted(HookRegistry._patched),
        "modelopt": outcome(lambda: modelopt.apply(layer, x, layer.bias)),
        "fp8_utils.apply_fp8_linear_bmm_flashinfer": outcome(lambda: fp8_utils.apply_fp8_linear_bmm_flashinfer(
            x, layer.weight, layer.weight_scale, layer.input_scale, layer.bias)),
        "compressed_tensors": outcome(lambda: scheme.apply_weights(layer, x, layer.bias)),
        "bmm_fp8": outcome(lambda: gemm_ops.bmm_fp8(a, b, one, one, torch.bfloat16)),
        "load_model_hooked": hasattr(ModelRunner.load_model, "__wrapped__"),
    }
