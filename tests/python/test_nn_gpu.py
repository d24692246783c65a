"""fp8gemm.nn.Linear, quantize_ and tune_model on a GPU (skipped without CUDA): numerics against a
float64 reference of the quantized operands and against torch._scaled_mm on the same operands,
bias, leading dims, static and dynamic scales (no host sync), CUDA-graph capture, torch.compile,
a Hugging Face model end to end, the choice log and library warnings as Python warnings."""

import logging
import warnings

import pytest
import torch

import fp8gemm
from conftest import HAS_GPU
from fp8gemm.nn import Linear
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3
from helpers import assert_close_to_reference

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def make_layer(k, n, bias=True, out_dtype=torch.bfloat16, activation_scale="dynamic", seed=0):
    torch.manual_seed(seed)
    ref = torch.nn.Linear(k, n, bias=bias, dtype=torch.bfloat16, device="cuda")
    return Linear.from_linear(ref, out_dtype=out_dtype, activation_scale=activation_scale)


def quantized_operands(layer, x):
    """What the layer multiplies: x in e4m3 [m, k], W.t() [k, n], their scales."""
    x2 = x.reshape(-1, layer.in_features)
    scale = layer.input_scale if layer.input_scale is not None else per_tensor_scale(x2)
    return quantize_e4m3(x2, scale), layer.weight.t(), scale.reshape(1), layer.weight_scale.reshape(1)


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("activation_scale", ["dynamic", 0.02])
@pytest.mark.parametrize("m,k,n", [(1, 256, 512), (37, 1024, 768), (300, 512, 1024)])
def test_numerics_against_float64_and_scaled_mm(out_dtype, activation_scale, m, k, n):
    layer = make_layer(k, n, bias=False, out_dtype=out_dtype, activation_scale=activation_scale, seed=m)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    y = layer(x)
    assert y.shape == (m, n) and y.dtype == out_dtype
    A, B, sa, sb = quantized_operands(layer, x)
    assert_close_to_reference(y[None], A[None], B[None], sa, sb)
    theirs = torch._scaled_mm(A, B, sa, sb, out_dtype=out_dtype, use_fast_accum=True)
    torch.testing.assert_close(y.float(), theirs.float(), rtol=2**-6, atol=1e-2 * theirs.abs().max().item())


def test_close_to_the_bf16_layer():
    torch.manual_seed(1)
    ref = torch.nn.Linear(1024, 512, dtype=torch.bfloat16, device="cuda")
    layer = Linear.from_linear(ref)
    x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
    want, got = ref(x).float(), layer(x).float()
    assert ((got - want).norm() / want.norm()).item() < 0.06  # two e4m3 roundings of 3 mantissa bits


def test_bias_and_leading_dims():
    layer = make_layer(256, 128, bias=True)
    x = torch.randn(2, 3, 5, 256, device="cuda", dtype=torch.bfloat16)
    y = layer(x)
    assert y.shape == (2, 3, 5, 128)
    A, B, sa, sb = quantized_operands(layer, x)
    no_bias = torch._scaled_mm(A, B, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
    torch.testing.assert_close(y.reshape(-1, 128).float(), (no_bias + layer.bias).float(), rtol=2**-6, atol=2**-6)


def test_empty_and_float32_inputs():
    layer = make_layer(256, 128)
    assert layer(torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)).shape == (0, 128)
    assert layer(torch.randn(4, 256, device="cuda")).dtype == torch.bfloat16


def test_dynamic_scale_follows_the_input_without_a_host_sync():
    layer = make_layer(512, 256, bias=False)
    x = torch.randn(16, 512, device="cuda", dtype=torch.bfloat16)
    base = layer(x)
    torch.cuda.set_sync_debug_mode("error")  # any device-to-host sync in the forward raises
    try:
        scaled = layer(8 * x)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.testing.assert_close(scaled.float(), 8 * base.float(), rtol=2**-7, atol=0)


@pytest.mark.parametrize("activation_scale", ["dynamic", 0.05])
def test_cuda_graph_capture_and_replay(activation_scale):
    layer = make_layer(512, 256, activation_scale=activation_scale)
    x = torch.randn(8, 512, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        layer(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = layer(x)
    x.mul_(3)  # new values, same buffer: the replay quantizes them with their own scale
    graph.replay()
    torch.cuda.synchronize()
    eager = layer(x).float()
    torch.testing.assert_close(y.float(), eager, rtol=2**-7, atol=1e-3 * eager.abs().max().item())


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_torch_compile_fullgraph(mode):
    layer = make_layer(512, 256)
    compiled = torch.compile(layer, fullgraph=True, dynamic=mode is None, mode=mode)
    for m in (16, 40):
        x = torch.randn(m, 512, device="cuda", dtype=torch.bfloat16)
        torch.testing.assert_close(compiled(x).float(), layer(x).float(), rtol=2**-6, atol=2**-6)


def test_hf_model_quantized_end_to_end():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=512, num_hidden_layers=2)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, 512, (2, 12), device="cuda")
    with torch.no_grad():
        want = model(input_ids=ids).logits.float()
        fp8gemm.quantize_(model)
        got = model(input_ids=ids).logits.float()
    assert ((got - want).norm() / want.norm()).item() < 0.1


def test_tune_model_tunes_the_layers_keys():
    model = torch.nn.Sequential(make_layer(512, 256), make_layer(256, 512))
    decisions = fp8gemm.tune_model(model, max_tokens=16, cache=False, key_budget_ms=10)
    keys = {(d["m_bucket"], d["n"], d["k"]) for d in decisions}
    assert keys == {(m, n, k) for m in (1, 2, 4, 8, 16) for n, k in ((256, 512), (512, 256))}


def test_choice_log(caplog):
    layer = make_layer(512, 256)
    x = torch.randn(5, 512, device="cuda", dtype=torch.bfloat16)
    fp8gemm.set_log_choices(True)
    try:
        with caplog.at_level(logging.INFO, logger="fp8gemm"):
            layer(x)
            layer(x)  # the same key: logged once
    finally:
        fp8gemm.set_log_choices(False)
    lines = [r.getMessage() for r in caplog.records if "runs" in r.getMessage()]
    assert len(lines) == 1 and "m=5 (bucket m<=8) n=256 k=512" in lines[0], lines


def test_library_warnings_are_python_warnings(tmp_path):
    bad = tmp_path / "corrupt.json"
    bad.write_text("{ not json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fp8gemm.load_cache(str(bad)) == 0
    assert any("fp8gemm:" in str(w.message) and "corrupt.json" in str(w.message) for w in caught), \
        [str(w.message) for w in caught]
