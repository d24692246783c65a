"""fp8gemm.nn.Linear without a GPU: argument rules, from_linear's quantization, buffers and state
dict, dtype conversions, and shapes on meta tensors (eager, torch.compile fullgraph, symbolic M)."""

import io
import math

import pytest
import torch

import fp8gemm
from fp8gemm.nn import Linear
from fp8gemm.scaling import E4M3, E4M3_MAX, quantize_per_tensor


def test_buffers_and_defaults():
    layer = Linear(64, 32)
    assert layer.weight.shape == (32, 64) and layer.weight.dtype == E4M3
    assert layer.weight_scale.shape == () and layer.weight_scale.dtype == torch.float32
    assert layer.input_scale is None and layer.dynamic
    assert layer.bias.shape == (32,) and layer.bias.dtype == torch.bfloat16
    assert set(layer.state_dict()) == {"weight", "weight_scale", "bias"}
    assert list(layer.parameters()) == []  # inference only: buffers, no parameters


def test_static_scale_is_a_buffer():
    layer = Linear(32, 16, bias=False, out_dtype=torch.float16, activation_scale=0.25)
    assert not layer.dynamic and layer.bias is None
    assert layer.input_scale.item() == 0.25 and layer.input_scale.dtype == torch.float32
    assert set(layer.state_dict()) == {"weight", "weight_scale", "input_scale"}
    from_tensor = Linear(32, 16, activation_scale=torch.tensor([0.5], dtype=torch.float64))
    assert from_tensor.input_scale.shape == () and from_tensor.input_scale.item() == 0.5


@pytest.mark.parametrize("kwargs,exc,text", [
    (dict(in_features=24, out_features=32), ValueError, "in_features must be a positive multiple of 16"),
    (dict(in_features=32, out_features=40), ValueError, "out_features must be a positive multiple of 16"),
    (dict(in_features=0, out_features=32), ValueError, "in_features must be a positive multiple of 16"),
    (dict(in_features=32.0, out_features=32), TypeError, "in_features must be an int"),
    (dict(in_features=32, out_features=32, out_dtype=torch.float32), TypeError,
     "out_dtype must be torch.bfloat16 or torch.float16"),
    (dict(in_features=32, out_features=32, activation_scale="static"), ValueError,
     'activation_scale must be "dynamic"'),
    (dict(in_features=32, out_features=32, activation_scale=0.0), ValueError, "must be finite and > 0"),
    (dict(in_features=32, out_features=32, activation_scale=math.inf), ValueError, "must be finite and > 0"),
    (dict(in_features=32, out_features=32, activation_scale=torch.ones(2)), ValueError, "exactly one element"),
    (dict(in_features=32, out_features=32, activation_scale=[1.0]), TypeError, "activation_scale must be"),
    (dict(in_features=32, out_features=32, backend="cuda"), ValueError, "backend must be one of"),
])
def test_constructor_errors(kwargs, exc, text):
    with pytest.raises(exc, match=None) as info:
        Linear(**kwargs)
    assert text in str(info.value), str(info.value)


def test_tactic_name_is_a_valid_backend():
    assert Linear(32, 32, backend="cublaslt:heuristic").backend == "cublaslt:heuristic"


def test_from_linear_quantizes_per_tensor():
    torch.manual_seed(0)
    ref = torch.nn.Linear(128, 64, dtype=torch.bfloat16)
    layer = Linear.from_linear(ref)
    w = ref.weight.float()
    scale = w.abs().max() / E4M3_MAX
    assert layer.weight_scale.item() == pytest.approx(scale.item(), rel=1e-6)
    assert layer.out_dtype == torch.bfloat16
    dequant = layer.weight.float() * layer.weight_scale
    # e4m3 keeps 3 mantissa bits: each weight within half an ulp (2^-4 relative) of its value,
    # values below the normal range within half the smallest subnormal step.
    assert ((dequant - w).abs() <= w.abs() * 2**-4 + scale * 2**-10).all()
    assert dequant.abs().max().item() == pytest.approx(w.abs().max().item(), rel=2**-4)
    assert torch.equal(layer.bias, ref.bias.detach())


def test_from_linear_dtypes_and_options():
    half = Linear.from_linear(torch.nn.Linear(32, 32, bias=False, dtype=torch.float16), activation_scale=2.0)
    assert half.out_dtype == torch.float16 and half.bias is None and half.input_scale.item() == 2.0
    f32 = Linear.from_linear(torch.nn.Linear(32, 32))
    assert f32.out_dtype == torch.bfloat16 and f32.bias.dtype == torch.bfloat16
    forced = Linear.from_linear(torch.nn.Linear(32, 32, dtype=torch.bfloat16), out_dtype=torch.float16)
    assert forced.out_dtype == torch.float16 and forced.bias.dtype == torch.float16


def test_from_linear_errors():
    with pytest.raises(TypeError, match="expected a torch.nn.Linear"):
        Linear.from_linear(torch.nn.Conv1d(4, 4, 1))
    with pytest.raises(TypeError, match="weight must be bfloat16, float16 or float32"):
        Linear.from_linear(torch.nn.Linear(32, 32, dtype=torch.float64))
    with pytest.raises(ValueError, match="in_features must be a positive multiple of 16"):
        Linear.from_linear(torch.nn.Linear(20, 32))


def test_all_zero_weight_gets_a_positive_scale():
    q, scale = quantize_per_tensor(torch.zeros(16, 16))
    assert scale.item() > 0 and not q.float().any()


def test_dtype_conversion_keeps_fp8_and_float32():
    layer = Linear.from_linear(torch.nn.Linear(32, 16, dtype=torch.bfloat16), activation_scale=0.5)
    weight = layer.weight.clone()
    layer.half()
    layer.to(torch.float32)
    assert layer.weight.dtype == E4M3 and torch.equal(layer.weight.view(torch.uint8), weight.view(torch.uint8))
    assert layer.weight_scale.dtype == torch.float32 and layer.input_scale.dtype == torch.float32
    assert layer.bias.dtype == torch.bfloat16
    moved = layer.to("meta")
    assert moved.weight.device.type == "meta" and moved.weight.dtype == E4M3


def test_state_dict_round_trip_and_one_element_scales():
    src = Linear.from_linear(torch.nn.Linear(64, 32, dtype=torch.bfloat16), activation_scale=0.125)
    buf = io.BytesIO()
    torch.save(src.state_dict(), buf)
    dst = Linear(64, 32, activation_scale=1.0)
    dst.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    for name in ("weight", "weight_scale", "input_scale", "bias"):
        assert torch.equal(getattr(dst, name).float(), getattr(src, name).float()), name
    # Checkpoints that store the scales as [1] load too.
    sd = {k: (v.reshape(1) if v.dim() == 0 else v) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)
    assert dst.weight_scale.shape == () and dst.input_scale.item() == 0.125


def _meta_layer(**kwargs):
    return Linear(256, 128, device="meta", **kwargs)


@pytest.mark.parametrize("activation_scale", ["dynamic", 0.5])
@pytest.mark.parametrize("shape", [(7, 256), (2, 3, 256), (0, 256), (256,)])
def test_meta_forward_shapes(activation_scale, shape):
    layer = _meta_layer(activation_scale=activation_scale, out_dtype=torch.float16)
    y = layer(torch.empty(shape, dtype=torch.bfloat16, device="meta"))
    assert y.shape == shape[:-1] + (128,) and y.dtype == torch.float16 and y.device.type == "meta"


def test_forward_input_errors():
    layer = _meta_layer()
    with pytest.raises(ValueError, match=r"last dim must be in_features=256, got shape \(4, 128\)"):
        layer(torch.empty(4, 128, dtype=torch.bfloat16, device="meta"))
    with pytest.raises(TypeError, match="input must be bfloat16, float16 or float32"):
        layer(torch.empty(4, 256, dtype=torch.float64, device="meta"))
    with pytest.raises(ValueError, match="linear_fp8: x must be a CUDA tensor"):  # the op's own device rule
        Linear(32, 32)(torch.ones(2, 32))


@pytest.mark.parametrize("activation_scale", ["dynamic", 0.5])
@pytest.mark.parametrize("bias", [True, False])
def test_torch_compile_fullgraph_meta(activation_scale, bias):
    layer = _meta_layer(activation_scale=activation_scale, bias=bias)
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager", dynamic=True)
    for m in (16, 40):
        x = torch.empty(2, m, 256, dtype=torch.bfloat16, device="meta")
        assert compiled(x).shape == (2, m, 128)


def test_make_fx_records_one_linear_op_and_keeps_m_symbolic():
    from torch.fx.experimental.proxy_tensor import make_fx

    layer = _meta_layer()
    buffers = dict(layer.named_buffers())

    def f(x, buffers):  # the buffers as inputs, so that make_fx traces them as fake tensors
        return torch.func.functional_call(layer, buffers, (x,))

    gm = make_fx(f, tracing_mode="symbolic")(torch.empty(48, 256, dtype=torch.bfloat16, device="meta"), buffers)
    # One op for the whole layer: the quantization and the dynamic scale are inside it (no torch
    # elementwise kernels, no host sync).
    assert gm.code.count("fp8gemm.linear_fp8") == 1, gm.code
    assert "amax" not in gm.code and "item" not in gm.code and "gemm_fp8" not in gm.code, gm.code
    assert gm(torch.empty(5, 256, dtype=torch.bfloat16, device="meta"), buffers).shape == (5, 128)


def test_package_exports():
    for name in ("nn", "quantize_", "tune_model", "set_log_choices", "default_cache_path"):
        assert hasattr(fp8gemm, name), name
