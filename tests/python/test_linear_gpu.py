"""The linear op on a GPU (skipped without CUDA): its quantization bit for bit against
fp8gemm.scaling on the GPU (every bf16/fp16 value; the dynamic scale against per_tensor_scale),
its output against the float64 reference of the quantized operands (bias included) and against
quantize + gemm_fp8 with the same tactic, for every fused path the op takes (static and dynamic,
each dynamic kernel path, bias or not, bf16/fp16, backends); CUDA-graph capture and
torch.compile."""

import pytest
import torch

import fp8gemm
from conftest import HAS_GPU
from helpers import assert_layer_close, layer_reference
from fp8gemm.scaling import E4M3, per_tensor_scale, quantize_e4m3

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
ops = torch.ops.fp8gemm


def same_codes(a, b):
    a8, b8 = a.view(torch.uint8), b.view(torch.uint8)
    nan_a, nan_b = (a8 & 0x7F) == 0x7F, (b8 & 0x7F) == 0x7F
    return bool(torch.equal(nan_a, nan_b) and torch.equal(a8[~nan_a], b8[~nan_b]))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_quantization_on_every_value(dtype):
    x = torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(dtype).reshape(4096, 16).cuda()
    for scale in (1.0, 3.0, 1e-3, 7.0e4, 1e-30, 1e30):  # the last two outside the reciprocal's range
        s = torch.tensor(scale, device="cuda")
        assert same_codes(ops.quantize_fp8(x, s), quantize_e4m3(x, s)), scale


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("m,k", [(1, 4096), (8, 4096), (16, 8192), (300, 4096), (4096, 8192)])  # one block, two kernels
def test_dynamic_scale_is_per_tensor_scale(dtype, m, k):
    for seed in range(3):
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = (torch.randn(m, k, device="cuda", generator=g) * 10.0 ** (seed - 1)).to(dtype)
        q, s = ops.quantize_fp8_dynamic(x)
        want = per_tensor_scale(x)
        assert torch.equal(s, want), (s.item(), want.item())
        assert same_codes(q, quantize_e4m3(x, want))


def layer_inputs(m, n, k, dtype, out_dtype, bias, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    w = torch.randn(n, k, device="cuda", generator=g).to(E4M3)
    b = (torch.randn(n, device="cuda", generator=g) * k**0.5).to(out_dtype) if bias else None
    return x, w, torch.tensor(0.75, device="cuda"), b


@pytest.mark.parametrize("backend", ["auto", "cublaslt", "small_m", "cutlass"])
@pytest.mark.parametrize("m", [1, 7, 16, 77, 512])
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype,out_dtype", [(torch.bfloat16, torch.bfloat16), (torch.float16, torch.bfloat16),
                                             (torch.bfloat16, torch.float16)])
def test_layer_against_float64_and_quantize_then_gemm(backend, m, dynamic, bias, dtype, out_dtype):
    if backend == "small_m" and m > 32:
        pytest.skip("small_m runs M <= 32")
    if backend == "cutlass" and bias:
        with pytest.raises(RuntimeError, match="bias"):
            ops.linear_fp8(*layer_inputs(m, 512, 1024, dtype, out_dtype, True)[:3], None,
                           layer_inputs(m, 512, 1024, dtype, out_dtype, True)[3], out_dtype, backend)
        return
    n, k = 768, 2048
    x, w, w_scale, b = layer_inputs(m, n, k, dtype, out_dtype, bias, seed=m)
    static = per_tensor_scale(x) * 0.8  # calibrated a little low: some values saturate
    if dynamic:
        y, s = ops.linear_fp8_dynamic(x, w, w_scale, b, out_dtype, backend)
        assert torch.equal(s, per_tensor_scale(x))
    else:
        s = static
        y = ops.linear_fp8(x, w, w_scale, s, b, out_dtype, backend)
    assert y.shape == (m, n) and y.dtype == out_dtype
    x_fp8 = quantize_e4m3(x, s)
    assert_layer_close(y, *layer_reference(x_fp8, w, s, w_scale, b))
    if b is None:  # the same tactic on the same FP8 operands: the same bits
        tactic = fp8gemm.choose(m, n, k, backend=backend, dtype=out_dtype)
        want = ops.gemm_fp8(x_fp8, w.t(), s.reshape(1), w_scale.reshape(1), out_dtype, tactic)
        assert torch.equal(y, want), tactic


def test_leading_dims_and_empty():
    x, w, w_scale, b = layer_inputs(30, 256, 512, torch.bfloat16, torch.bfloat16, True)
    y = fp8gemm.linear_fp8(x.reshape(2, 3, 5, 512), w, w_scale, bias=b)
    assert y.shape == (2, 3, 5, 256)
    assert torch.equal(y.reshape(30, 256), fp8gemm.linear_fp8(x, w, w_scale, bias=b))
    y, s = fp8gemm.linear_fp8(x[:0], w, w_scale, return_scale=True)
    assert y.shape == (0, 256) and s.item() == (torch.tensor(1e-12) / torch.tensor(448.0)).item()


@pytest.mark.parametrize("dynamic", [False, True])
def test_graph_capture_replays_on_new_activations(dynamic):
    x, w, w_scale, b = layer_inputs(8, 1024, 4096, torch.bfloat16, torch.bfloat16, True)
    s = None if dynamic else per_tensor_scale(x)
    run = lambda: fp8gemm.linear_fp8(x, w, w_scale, s, b)  # noqa: E731
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = run()
    for scale in (1.0, 30.0):
        x.copy_(torch.randn_like(x) * scale)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, run())


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    x, w, w_scale, b = layer_inputs(24, 512, 1024, torch.bfloat16, torch.bfloat16, True)
    s = None if dynamic else per_tensor_scale(x)

    def f(x):
        return fp8gemm.linear_fp8(x, w, w_scale, s, b) * 2

    compiled = torch.compile(f, fullgraph=True)
    assert torch.equal(compiled(x), f(x))


@pytest.mark.parametrize("layer", ["static", "dynamic+bias"])
def test_layer_keys_are_tuned_as_the_layer_runs(layer):
    """fp8gemm.tune(layer=...) times each GEMM tactic with the quantization before it and keeps the
    choice under the layer's key, which linear_fp8 then runs (and explain names)."""
    m, n, k = 16, 1024, 2048
    decisions = fp8gemm.tune([(m, n, k)], layer=layer, key_budget_ms=20, retune=True)
    assert decisions[0]["key"].startswith("linear_fp8 bf16 " + layer.split("+")[0]), decisions[0]["key"]
    assert fp8gemm.choose(m, n, k, layer=layer) == decisions[0]["choice"]
    assert "tuned cache: linear_fp8" in fp8gemm.explain(m, n, k, layer=layer, measure=False)
    x, w, w_scale, b = layer_inputs(m, n, k, torch.bfloat16, torch.bfloat16, "bias" in layer)
    if layer.startswith("dynamic"):
        y, used = fp8gemm.linear_fp8(x, w, w_scale, bias=b, return_scale=True)
    else:
        used = per_tensor_scale(x)
        y = fp8gemm.linear_fp8(x, w, w_scale, used, b)
    assert_layer_close(y, *layer_reference(quantize_e4m3(x, used), w, used, w_scale, b))
