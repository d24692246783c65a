"""The engine adapters' shared logic without a GPU and without the engines: the switch, the layers
they record, warm-up tuning (fp8gemm.tune and choose replaced by fakes), the routing predicates,
and the op calls in the engines' layouts on meta tensors. tests/engines/ runs them inside the
real vLLM and SGLang."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import fp8gemm
from fp8gemm.integrations import _common, sglang as sglang_adapter

E4M3 = torch.float8_e4m3fn
META = dict(device="meta")


@pytest.fixture(autouse=True)
def no_layers():
    _common.forget_layers()
    yield
    _common.forget_layers()


@pytest.fixture
def fake_tune(fake_tune, monkeypatch):
    # conftest's recorder, and a choice that names its M and layer.
    monkeypatch.setattr(fp8gemm, "choose", lambda m, n, k, **kw: f"tactic(m={m},{kw['layer']})")
    return fake_tune


@pytest.mark.parametrize("value, off", [(None, False), ("", False), ("0", False), ("1", True), ("yes", True)])
def test_the_switch(monkeypatch, value, off):
    if value is None:
        monkeypatch.delenv("FP8GEMM_DISABLE", raising=False)
    else:
        monkeypatch.setenv("FP8GEMM_DISABLE", value)
    assert _common.disabled() is off


def test_importing_the_adapters_imports_no_engine():
    code = ("import sys, fp8gemm, fp8gemm.integrations.vllm, fp8gemm.integrations.sglang; "
            "print(sorted(m for m in ('vllm', 'sglang') if m in sys.modules))")
    package_root = str(Path(fp8gemm.__file__).resolve().parents[1])  # this checkout's python/ or site-packages
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "[]"


def test_layers_are_recorded_once_per_key():
    _common.record_layer(4096, 4096, torch.bfloat16, dynamic=False, bias=False)
    _common.record_layer(4096, 4096, torch.bfloat16, dynamic=False, bias=False)
    _common.record_layer(4096, 4096, torch.bfloat16, dynamic=True, bias=True)
    layers = _common.recorded_layers()
    assert [(s.n, s.k, s.layer) for s in layers] == [(4096, 4096, "static"), (4096, 4096, "dynamic+bias")]


def test_warm_up_tunes_every_bucket_with_the_group_into_the_default_cache(fake_tune, monkeypatch, caplog):
    monkeypatch.setenv("FP8GEMM_CACHE", "/tmp/engine-cache.json")
    monkeypatch.setattr(fp8gemm.tuning, "default_cache_path", lambda: "/tmp/engine-cache.json")
    monkeypatch.delenv("FP8GEMM_WARMUP_TUNE", raising=False)
    _common.record_layer(192, 64, torch.bfloat16, dynamic=False, bias=False)
    _common.record_layer(64, 64, torch.bfloat16, dynamic=False, bias=False)
    _common.record_layer(64, 64, torch.bfloat16, dynamic=True, bias=True)
    group = object()
    with caplog.at_level(logging.INFO, logger="fp8gemm"):
        decisions = _common.warm_up("vllm", 24, group=group)
    ms = [1, 2, 4, 8, 16, 24]
    (static, kw_static), (dynamic, kw_dynamic) = fake_tune
    assert static == [(1, m, n, 64) for n in (192, 64) for m in ms]
    assert dynamic == [(1, m, 64, 64) for m in ms]
    assert kw_static["layer"] == "static" and kw_dynamic["layer"] == "dynamic+bias"
    assert kw_static["group"] is group and kw_static["cache"] == "/tmp/engine-cache.json"
    assert len(decisions) == len(static) + len(dynamic)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("vllm: ")]
    assert lines == ["vllm: n=192 k=64 bf16 static runs m=1: tactic(m=1,static); m=24: tactic(m=24,static)",
                     "vllm: n=64 k=64 bf16 static runs m=1: tactic(m=1,static); m=24: tactic(m=24,static)",
                     "vllm: n=64 k=64 bf16 dynamic+bias runs m=1: tactic(m=1,dynamic+bias); "
                     "m=24: tactic(m=24,dynamic+bias)"]


def test_warm_up_without_tuning_or_layers(fake_tune, monkeypatch, caplog):
    assert _common.warm_up("sglang", 64) == [] and fake_tune == []
    _common.record_layer(64, 64, torch.float16, dynamic=False, bias=True)
    monkeypatch.setenv("FP8GEMM_WARMUP_TUNE", "0")
    with caplog.at_level(logging.INFO, logger="fp8gemm"):
        assert _common.warm_up("sglang", 64) == []
    assert fake_tune == []
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("sglang: ")] == [
        "sglang: n=64 k=64 fp16 static+bias runs m=1: tactic(m=1,static+bias); m=64: tactic(m=64,static+bias)"]


def engine_weight(n, k, dtype=E4M3):
    """A weight as vLLM and SGLang hold it after loading: W[n, k].t()."""
    return torch.empty(n, k, dtype=dtype, **META).t()


def test_weight_and_bmm_predicates():
    assert _common.is_fp8gemm_weight(engine_weight(64, 128))
    assert not _common.is_fp8gemm_weight(torch.empty(128, 64, dtype=E4M3, **META))  # row-major [k, n]
    assert not _common.is_fp8gemm_weight(engine_weight(72, 128))
    assert not _common.is_fp8gemm_weight(engine_weight(64, 128, torch.bfloat16))
    a = torch.empty(16, 8, 128, dtype=E4M3, **META)
    b = torch.empty(16, 512, 128, dtype=E4M3, **META).transpose(1, 2)
    one = torch.empty(1, **META)
    assert _common.is_fp8gemm_bmm(a, b, one, one, torch.bfloat16)
    assert not _common.is_fp8gemm_bmm(a, b.contiguous(), one, one, torch.bfloat16)
    assert not _common.is_fp8gemm_bmm(a, b, torch.empty(16, **META), one, torch.bfloat16)
    assert not _common.is_fp8gemm_bmm(a, b, one, one, torch.float32)


@pytest.mark.parametrize("static", [True, False])
def test_linear_in_the_engines_layout(static):
    x = torch.empty(3, 5, 128, dtype=torch.bfloat16, **META)
    scale = torch.empty((), **META)
    y = _common.linear(x, engine_weight(64, 128), scale, scale if static else None,
                       torch.empty(64, dtype=torch.bfloat16, **META))
    assert y.shape == (3, 5, 64) and y.dtype == torch.bfloat16
    with pytest.raises(ValueError, match="multiple of 16"):
        _common.linear(torch.empty(4, 120, dtype=torch.bfloat16, **META), engine_weight(64, 120), scale, scale, None)


def test_gemm_and_bmm_shapes():
    one = torch.empty(1, **META)
    out = _common.gemm(torch.empty(8, 128, dtype=E4M3, **META), engine_weight(64, 128), one, one, torch.float16)
    assert out.shape == (8, 64) and out.dtype == torch.float16
    a = torch.empty(16, 8, 128, dtype=E4M3, **META)
    b = torch.empty(16, 512, 128, dtype=E4M3, **META).transpose(1, 2)
    assert _common.bmm(a, b, one, one, torch.bfloat16).shape == (16, 8, 512)


def fail(*args, **kwargs):
    raise AssertionError("the engine's own path was called")


def test_sglang_apply_fp8_linear_routes_only_the_static_per_tensor_case():
    x = torch.empty(8, 128, dtype=torch.bfloat16, **META)
    w = engine_weight(64, 128)
    one = torch.empty((), **META)
    y = sglang_adapter.apply_fp8_linear(fail, input=x, weight=w, weight_scale=one, input_scale=one,
                                        bias=torch.empty(64, dtype=torch.bfloat16, **META), compressed_tensor_quant=True)
    assert y.shape == (8, 64)
    calls = []

    def engine(*args, **kwargs):
        calls.append(kwargs)
        return "engine"

    per_channel = torch.empty(64, **META)
    assert sglang_adapter.apply_fp8_linear(engine, input=x, weight=w, weight_scale=per_channel, input_scale=one) == "engine"
    assert sglang_adapter.apply_fp8_linear(engine, input=x, weight=w, weight_scale=one, input_scale=None,
                                           use_per_token_if_dynamic=True) == "engine"
    prequantized = torch.empty(8, 128, dtype=E4M3, **META)
    assert sglang_adapter.apply_fp8_linear(engine, input=prequantized, weight=w, weight_scale=one,
                                           input_scale=one) == "engine"
    assert calls[1] == {"use_per_token_if_dynamic": True}


def test_sglang_bmm_fp8_keeps_other_layouts_on_the_engine():
    one = torch.empty(1, **META)
    a = torch.empty(16, 8, 128, dtype=E4M3, **META)
    b = torch.empty(16, 512, 128, dtype=E4M3, **META).transpose(1, 2)
    assert sglang_adapter.bmm_fp8(fail, a, b, one, one, torch.bfloat16).shape == (16, 8, 512)
    assert sglang_adapter.bmm_fp8(lambda *a: "engine", a, b.contiguous(), one, one, torch.bfloat16) == "engine"


def test_sglang_records_the_layers_its_hooks_route():
    class Layer(torch.nn.Module):
        def __init__(self, n, k, weight_scale_shape=(), input_scale=True, bias=False):
            super().__init__()
            self.weight = torch.nn.Parameter(engine_weight(n, k), requires_grad=False)
            self.weight_scale = torch.nn.Parameter(torch.empty(weight_scale_shape, **META), requires_grad=False)
            self.input_scale = torch.nn.Parameter(torch.empty((), **META), requires_grad=False) if input_scale else None
            self.bias = torch.nn.Parameter(torch.empty(n, **META), requires_grad=False) if bias else None

    model = torch.nn.ModuleList([Layer(64, 128), Layer(64, 128, bias=True), Layer(32, 128, weight_scale_shape=(32,)),
                                 Layer(48, 128, input_scale=False), torch.nn.Linear(16, 16)])
    assert sglang_adapter.record_model_layers(model, torch.bfloat16) == 2
    assert [(s.n, s.k, s.layer) for s in _common.recorded_layers()] == [(64, 128, "static"), (64, 128, "static+bias")]


def test_a_failed_warm_up_tuning_warns_and_lets_the_engine_start(monkeypatch, caplog):
    def tune(problems, **kwargs):
        raise fp8gemm.GroupTimeoutError("rank 1 did not answer", [1], "shares")

    monkeypatch.setattr(fp8gemm, "tune", tune)
    monkeypatch.setattr(fp8gemm, "choose", lambda m, n, k, **kw: "default")
    monkeypatch.delenv("FP8GEMM_WARMUP_TUNE", raising=False)
    _common.record_layer(64, 64, torch.bfloat16, dynamic=False, bias=False)
    with caplog.at_level(logging.INFO, logger="fp8gemm"):
        assert _common.warm_up("vllm", 8) == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("warm-up tuning failed" in m and "rank 1 did not answer" in m for m in messages)
    assert "vllm: n=64 k=64 bf16 static runs m=1: default; m=8: default" in messages


def test_sglang_after_load_model_records_and_warms_up(monkeypatch):
    warmed = []
    monkeypatch.setattr(sglang_adapter, "max_batched_tokens", lambda: 16384)
    monkeypatch.setattr(_common, "warm_up", lambda engine, max_tokens, group=None: warmed.append((engine, max_tokens)))
    layer = torch.nn.Module()
    layer.weight = torch.nn.Parameter(engine_weight(64, 128), requires_grad=False)
    layer.weight_scale = torch.nn.Parameter(torch.empty((), **META), requires_grad=False)
    layer.input_scale = torch.nn.Parameter(torch.empty((), **META), requires_grad=False)
    runner = type("Runner", (), {"model": torch.nn.ModuleList([layer]),
                                 "model_config": type("Config", (), {"dtype": torch.float16})()})()
    assert sglang_adapter.after_load_model("loaded", runner) == "loaded"
    assert warmed == [("sglang", 16384)]
    assert [(s.n, s.k, s.out_dtype, s.layer) for s in _common.recorded_layers()] == [(64, 128, torch.float16, "static")]
    runner.model = torch.nn.ModuleList([torch.nn.Linear(16, 16)])
    _common.forget_layers()
    assert sglang_adapter.after_load_model("loaded", runner) == "loaded" and warmed == [("sglang", 16384)]
