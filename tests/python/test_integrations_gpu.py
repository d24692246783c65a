"""The engine adapters' op calls on a GPU, with the tensors as vLLM and SGLang hold them (weight
W[n, k].t(), 0-d float32 scales, [tokens, k] or [batch, seq, k] activations, MLA's batched
products), against fp8gemm's own op on the usual layout and a float reference.
The engines are not needed: the adapters' functions are called as the engines call them."""

import pytest
import torch

import fp8gemm
from fp8gemm.integrations import _common, sglang as sglang_adapter
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3

from conftest import requires_gpu
from helpers import assert_layer_close, layer_reference

pytestmark = requires_gpu
E4M3 = torch.float8_e4m3fn


def layer(n, k, dtype=torch.bfloat16, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    w = (torch.randn(n, k, device="cuda", generator=g) * 0.05).to(E4M3)
    return dict(weight=w, weight_scale=torch.tensor(0.02, device="cuda"), input_scale=torch.tensor(0.03, device="cuda"),
                bias=torch.randn(n, device="cuda", generator=g).to(dtype))


def reference(x, p, input_scale):
    """float64 out and sum|x*w| from x quantized by fp8gemm.scaling's rule, shaped as the layer's out."""
    q = quantize_e4m3(x, input_scale).reshape(-1, x.shape[-1])
    ref, abs_sum = layer_reference(q, p["weight"], input_scale, p["weight_scale"], p["bias"])
    return ref.reshape(*x.shape[:-1], -1), abs_sum.reshape(*x.shape[:-1], -1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape", [(1, 4096), (37, 4096), (2, 300, 4096), (8192, 4096)], ids=str)
@pytest.mark.parametrize("static", [True, False], ids=["static", "dynamic"])
def test_linear_in_the_engines_layout(dtype, shape, static):
    n, k = 6144, shape[-1]
    p = layer(n, k, dtype)
    # x from its own generator: from the global one, after a test that seeded it with 0, x's rows
    # were the weight's rows, each output a sum of same-sign products (docs/design.md).
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(*shape, device="cuda", generator=g).to(dtype)
    s = p["input_scale"] if static else None
    y = _common.linear(x, p["weight"].t(), p["weight_scale"], s, p["bias"])
    want = fp8gemm.linear_fp8(x, p["weight"], p["weight_scale"], s, bias=p["bias"])
    assert y.shape == (*shape[:-1], n) and y.dtype == dtype
    torch.testing.assert_close(y, want)  # the same op and tactic (a split-K tactic may add in another order)
    assert_layer_close(y, *reference(x, p, s if static else per_tensor_scale(x)))


def test_sglang_paths_match_the_op():
    p = layer(1024, 512)
    x = torch.randn(5, 512, device="cuda", dtype=torch.bfloat16)
    want = fp8gemm.linear_fp8(x, p["weight"], p["weight_scale"], p["input_scale"], bias=p["bias"])
    w = p["weight"].t()
    torch.testing.assert_close(sglang_adapter.apply_fp8_linear_bmm_flashinfer(x, w, p["weight_scale"],
                                                                              p["input_scale"], p["bias"]), want)

    def engine(*args, **kwargs):
        raise AssertionError("SGLang's own path was taken")

    got = sglang_adapter.apply_fp8_linear(engine, input=x, weight=w, weight_scale=p["weight_scale"],
                                          input_scale=p["input_scale"], bias=p["bias"], compressed_tensor_quant=True)
    torch.testing.assert_close(got, want)
    q = quantize_e4m3(x, p["input_scale"])
    gemm = sglang_adapter.flashinfer_bmm_fp8(q, w, p["input_scale"], p["weight_scale"], torch.bfloat16)
    ref = q.float() @ p["weight"].float().t() * p["input_scale"] * p["weight_scale"]
    torch.testing.assert_close(gemm.float(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())


@pytest.mark.parametrize("heads, m, k, n", [(16, 1, 128, 512), (16, 64, 512, 128), (128, 7, 128, 512)])
def test_mla_batched_products(heads, m, k, n):
    """DeepSeek-style MLA: q_nope [heads, m, 128] x w_kc [heads, 128, 512] and attn [heads, m, 512] x
    w_vc [heads, 512, 128], the weights column-major as SGLang's loader leaves them."""
    g = torch.Generator(device="cuda").manual_seed(1)
    a = (torch.randn(heads, m, k, device="cuda", generator=g)).to(E4M3)
    b = (torch.randn(heads, n, k, device="cuda", generator=g) * 0.1).to(E4M3).transpose(1, 2)
    a_scale, b_scale = torch.tensor([0.5], device="cuda"), torch.tensor([0.25], device="cuda")
    got = sglang_adapter.bmm_fp8(lambda *args: pytest.fail("SGLang's own path was taken"), a, b, a_scale, b_scale,
                                 torch.bfloat16)
    ref = torch.bmm(a.float(), b.float()) * 0.125
    torch.testing.assert_close(got.float(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item())
    out = torch.empty(heads, m, n, device="cuda", dtype=torch.bfloat16)
    assert sglang_adapter.bmm_fp8(None, a, b, a_scale, b_scale, torch.bfloat16, out) is out
    torch.testing.assert_close(out, got)


def test_warm_up_tunes_and_names_the_tactics(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("FP8GEMM_CACHE", str(tmp_path / "cache.json"))
    monkeypatch.setattr(fp8gemm.tuning, "default_cache_path", lambda: str(tmp_path / "cache.json"))
    _common.forget_layers()
    _common.record_layer(1024, 512, torch.bfloat16, dynamic=False, bias=True)
    try:
        with caplog.at_level("INFO", logger="fp8gemm"):
            decisions = _common.warm_up("vllm", 16)
    finally:
        _common.forget_layers()
    assert len(decisions) == 5  # M buckets 1, 2, 4, 8, 16
    assert (tmp_path / "cache.json").is_file()
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("vllm: n=1024 k=512 bf16 static+bias")]
    assert len(lines) == 1 and "m=1: " in lines[0] and "m=16: " in lines[0]
