"""The linear op without a GPU: the quantization rule on the CPU (the op's host reference, which the
GPU kernels match bit for bit) against fp8gemm.scaling, the op's argument rules, and its Meta
shapes (eager, torch.compile fullgraph, symbolic M)."""

import math
import re

import pytest
import torch

import fp8gemm
from fp8gemm.scaling import E4M3, per_tensor_scale, quantize_e4m3

ops = torch.ops.fp8gemm


def every_value(dtype):
    """Every 16-bit pattern of `dtype` (NaN and infinities among them), as a [4096, 16] tensor."""
    return torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(dtype).reshape(4096, 16).contiguous()


def same_codes(a, b):
    """Equal e4m3 codes, any NaN code matching any other (torch keeps a NaN's sign, the rule need not)."""
    a8, b8 = a.view(torch.uint8), b.view(torch.uint8)
    nan_a, nan_b = (a8 & 0x7F) == 0x7F, (b8 & 0x7F) == 0x7F
    return bool(torch.equal(nan_a, nan_b) and torch.equal(a8[~nan_a], b8[~nan_b]))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("scale", [1.0, 3.0, 0.0625, 1e-3, 7.0e4, 448.0 / 57344.0, 1e-30, 1e30])
def test_static_quantization_is_scalings_rule_on_every_value(dtype, scale):
    x = every_value(dtype)
    s = torch.tensor(scale)
    assert same_codes(ops.quantize_fp8(x, s), quantize_e4m3(x, s))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_dynamic_scale_is_per_tensor_scale(dtype):
    g = torch.Generator().manual_seed(0)
    for trial in range(200):
        x = (torch.randn(8, 64, generator=g) * math.exp(torch.randn(1, generator=g).item() * 4)).to(dtype)
        q, s = ops.quantize_fp8_dynamic(x)
        want = per_tensor_scale(x)
        assert s.dtype == torch.float32 and s.shape == () and s.item() == want.item(), (trial, s, want)
        assert same_codes(q, quantize_e4m3(x, want))
    zeros = torch.zeros(4, 32, dtype=dtype)
    assert ops.quantize_fp8_dynamic(zeros)[1].item() == per_tensor_scale(zeros).item() == (torch.tensor(1e-12) / torch.tensor(448.0)).item()
    with_nan = torch.ones(2, 16, dtype=dtype)
    with_nan[1, 3] = float("nan")
    assert torch.isnan(ops.quantize_fp8_dynamic(with_nan)[1]) and torch.isnan(per_tensor_scale(with_nan))


def test_per_tensor_scale_divides_once():
    """The scale is amax / 448 rounded once in float32: for amax = 3 a multiplication by a rounded
    1/448 gives another float."""
    x = torch.tensor([3.0], dtype=torch.bfloat16)
    assert per_tensor_scale(x).item() == (torch.tensor(3.0) / torch.tensor(448.0)).item()


def test_quantize_wrapper():
    x = torch.randn(4, 32, dtype=torch.bfloat16)
    q, s = fp8gemm.quantize_fp8(x)
    assert q.dtype == E4M3 and q.shape == x.shape and s.item() == per_tensor_scale(x).item()
    s2 = torch.tensor(0.5)
    q2, same = fp8gemm.quantize_fp8(x, s2)
    assert same is s2 and same_codes(q2, quantize_e4m3(x, s2))


@pytest.mark.parametrize("args,exc,text", [
    (dict(x=torch.ones(4, 32)), TypeError, "x must be torch.bfloat16 or torch.float16"),
    (dict(x=torch.ones(4, 24, dtype=torch.bfloat16)), ValueError, "last dim must be a positive multiple of 16"),
    (dict(x=torch.ones(32, 4, dtype=torch.bfloat16).t()), ValueError, "x must be contiguous"),
    (dict(x=torch.ones((), dtype=torch.bfloat16)), ValueError, "at least one dimension"),
    (dict(scale=torch.ones(2)), ValueError, "scale must have exactly one element"),
    (dict(scale=torch.ones((), dtype=torch.float64)), TypeError, "scale must be torch.float32"),
])
def test_quantize_errors(args, exc, text):
    call = dict(x=torch.ones(4, 32, dtype=torch.bfloat16), scale=torch.tensor(1.0))
    call.update(args)
    with pytest.raises(exc) as info:
        ops.quantize_fp8(call["x"], call["scale"])
    assert text in str(info.value), str(info.value)


def meta_layer_args(m=16, n=64, k=128, dtype=torch.bfloat16):
    meta = dict(device="meta")
    return dict(x=torch.empty(m, k, dtype=dtype, **meta), weight=torch.empty(n, k, dtype=E4M3, **meta),
                weight_scale=torch.empty((), **meta), input_scale=torch.empty((), **meta),
                bias=torch.empty(n, dtype=dtype, **meta))


def call_linear(a, out_dtype=None, backend="auto"):
    return ops.linear_fp8(a["x"], a["weight"], a["weight_scale"], a["input_scale"], a["bias"], out_dtype, backend)


@pytest.mark.parametrize("change,exc,text", [
    (dict(x=torch.empty(16, 128, device="meta")), TypeError, "x must be torch.bfloat16 or torch.float16"),
    (dict(weight=torch.empty(64, 128, dtype=torch.bfloat16, device="meta")), TypeError,
     "weight must be torch.float8_e4m3fn or torch.float8_e5m2"),
    (dict(weight=torch.empty(64, 64, dtype=E4M3, device="meta")), ValueError,
     "x's last dim (128) must equal weight's in_features"),
    (dict(weight=torch.empty(128, 64, dtype=E4M3, device="meta").t()), ValueError,
     "weight must be the contiguous [out_features, in_features] weight as stored"),
    (dict(weight=torch.empty(2, 64, 128, dtype=E4M3, device="meta")), ValueError, "weight must be 2-D"),
    (dict(weight_scale=torch.empty(2, device="meta")), ValueError, "weight_scale must have exactly one element"),
    (dict(input_scale=torch.empty((), dtype=torch.float16, device="meta")), TypeError,
     "input_scale must be torch.float32"),
    (dict(bias=torch.empty(64, dtype=torch.float16, device="meta")), TypeError, "bias must have out_dtype"),
    (dict(bias=torch.empty(32, dtype=torch.bfloat16, device="meta")), ValueError, "bias must be 1-D [out_features]"),
    (dict(weight=torch.empty(72, 128, dtype=E4M3, device="meta"), bias=None), ValueError,
     "n must be a multiple of 16"),
    (dict(x=torch.empty(16, 128, dtype=torch.bfloat16)), ValueError, "x must be a CUDA tensor"),
    (dict(bias=torch.empty(64, dtype=torch.bfloat16)), ValueError, "bias is on cpu but x is on meta"),
])
def test_linear_argument_rules(change, exc, text):
    a = meta_layer_args()
    a.update(change)
    with pytest.raises(exc) as info:
        call_linear(a)
    assert text in str(info.value), str(info.value)


def test_linear_rejects_a_bad_backend_and_out_dtype():
    with pytest.raises(ValueError, match="unknown backend|backend"):
        call_linear(meta_layer_args(), backend="tensorrt")
    with pytest.raises(TypeError, match="out_dtype must be torch.bfloat16 or torch.float16"):
        call_linear(meta_layer_args(), out_dtype=torch.float32)


def test_linear_needs_cuda_tensors():
    cpu = {k: torch.empty_like(v, device="cpu") if v is not None else None for k, v in meta_layer_args().items()}
    with pytest.raises(ValueError, match="linear_fp8: x must be a CUDA tensor"):
        call_linear(cpu)


def test_meta_shapes_and_dtypes():
    a = meta_layer_args()
    assert call_linear(a).shape == (16, 64) and call_linear(a).dtype == torch.bfloat16
    a3 = dict(a, x=torch.empty(2, 3, 128, dtype=torch.bfloat16, device="meta"), bias=None)
    assert call_linear(a3, out_dtype=torch.float16).shape == (2, 3, 64)
    y, s = ops.linear_fp8_dynamic(a["x"], a["weight"], a["weight_scale"], a["bias"], None, "auto")
    assert y.shape == (16, 64) and s.shape == () and s.dtype == torch.float32
    empty = dict(a, x=torch.empty(0, 128, dtype=torch.bfloat16, device="meta"))
    assert call_linear(empty).shape == (0, 64)


def test_python_wrapper_return_scale():
    a = meta_layer_args()
    y, s = fp8gemm.linear_fp8(a["x"], a["weight"], a["weight_scale"], bias=a["bias"], return_scale=True)
    assert y.shape == (16, 64) and s.shape == ()
    with pytest.raises(ValueError, match="return_scale=True is for the dynamic scale"):
        fp8gemm.linear_fp8(a["x"], a["weight"], a["weight_scale"], a["input_scale"], return_scale=True)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_keeps_m_symbolic(dynamic):
    a = meta_layer_args()
    scale = None if dynamic else a["input_scale"]

    def f(x):
        return fp8gemm.linear_fp8(x, a["weight"], a["weight_scale"], scale, a["bias"])

    compiled = torch.compile(f, fullgraph=True, dynamic=True, backend="eager")
    for m in (5, 48):
        assert compiled(torch.empty(m, 128, dtype=torch.bfloat16, device="meta")).shape == (m, 64)


def layer_keys(layer, a_dtype=E4M3):
    return ops.tune_keys.default([1, 20, 4096, 4096], a_dtype, E4M3, torch.bfloat16, 100.0, 0.0, [], layer)


def test_layer_tuning_keys():
    """The linear layer's tuning keys (what fp8gemm.tune(layer=...) and tune_model tune), named
    without a GPU; every spelling checked before any GPU work."""
    assert layer_keys("") == ["bmm_fp8 e4m3xe4m3->bf16 b=1 m<=24 n=4096 k=4096 align=16"]
    assert layer_keys("bias") == ["bmm_fp8 e4m3xe4m3->bf16 b=1 m<=24 n=4096 k=4096 align=16 bias"]
    assert layer_keys("static") == ["linear_fp8 bf16 static e4m3xe4m3->bf16 b=1 m<=24 n=4096 k=4096 align=16"]
    assert layer_keys("dynamic+bias") == [
        "linear_fp8 bf16 dynamic e4m3xe4m3->bf16 b=1 m<=24 n=4096 k=4096 align=16 bias"]
    for bad in ("per_token", "static+", "dynamic+bias+bias", "bias+static"):
        with pytest.raises(ValueError, match=re.escape(f"layer '{bad}' is not one of static, dynamic")):
            layer_keys(bad)
    with pytest.raises(ValueError, match="the layer quantizes its activations to e4m3, so A must be e4m3"):
        layer_keys("static", a_dtype=torch.float8_e5m2)
