"""tune_model and the messages without a GPU: the M buckets it covers, the shapes it collects
(with fp8gemm.tune replaced), the cache it names, the no-GPU message, and the choice log switch."""

import logging

import pytest
import torch
from torch import nn

import fp8gemm
from fp8gemm import tuning
from fp8gemm.nn import Linear


def test_m_buckets_follow_the_library():
    assert tuning.m_buckets(1) == [1]
    assert tuning.m_buckets(16) == [1, 2, 4, 8, 16]
    assert tuning.m_buckets(300) == [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384]
    edges = tuning.m_buckets(20000)
    assert edges[-3:] == [12288, 16384, 32768]  # powers of two above the table
    assert all(torch.ops.fp8gemm.m_bucket(e) == e for e in edges)
    for bad in (0, -4, 2.5, True):
        with pytest.raises(ValueError, match="max_tokens must be a positive int"):
            tuning.m_buckets(bad)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = Linear(64, 192)
        self.o = Linear(64, 64)
        self.o2 = Linear(64, 64)  # same shape: tuned once
        self.half = Linear(64, 64, out_dtype=torch.float16)
        self.pinned = Linear(64, 32, backend="cublaslt")  # not "auto": nothing to tune
        self.plain = nn.Linear(64, 48)
        self.calibrated = Linear(64, 48, bias=False, activation_scale=0.5)


def test_model_shapes():
    assert tuning.model_shapes(Model()) == [(192, 64, torch.bfloat16), (64, 64, torch.bfloat16),
                                            (64, 64, torch.float16), (48, 64, torch.bfloat16)]
    assert tuning.model_layers(Model()) == [(192, 64, torch.bfloat16, "dynamic+bias"),
                                            (64, 64, torch.bfloat16, "dynamic+bias"),
                                            (64, 64, torch.float16, "dynamic+bias"), (48, 64, torch.bfloat16, "static")]


def test_tune_model_tunes_each_shape_over_the_buckets(fake_tune, tmp_path):
    path = tmp_path / "cache.json"
    decisions = fp8gemm.tune_model(Model(), max_tokens=24, cache=path, batch_sizes=(1, 2), key_budget_ms=7)
    assert len(fake_tune) == 3  # one call per (out dtype, layer)
    (bf16, kw_bf16), (fp16, kw_fp16), (static, kw_static) = fake_tune
    ms = [1, 2, 4, 8, 16, 24]
    assert bf16 == [(b, m, n, 64) for n in (192, 64) for b in (1, 2) for m in ms]
    assert fp16 == [(b, m, 64, 64) for b in (1, 2) for m in ms]
    assert static == [(b, m, 48, 64) for b in (1, 2) for m in ms]
    assert kw_bf16["dtype"] == torch.bfloat16 and kw_fp16["dtype"] == torch.float16
    assert kw_bf16["layer"] == kw_fp16["layer"] == "dynamic+bias" and kw_static["layer"] == "static"
    assert kw_bf16["cache"] == str(path) and kw_bf16["key_budget_ms"] == 7 and kw_bf16["retune"] is False
    assert len(decisions) == len(bf16) + len(fp16) + len(static)


def test_tune_model_cache_choice(fake_tune, monkeypatch):
    monkeypatch.setattr(tuning, "default_cache_path", lambda: "/tmp/default.json")
    fp8gemm.tune_model(Model(), max_tokens=1)
    assert fake_tune[-1][1]["cache"] == "/tmp/default.json"
    fp8gemm.tune_model(Model(), max_tokens=1, cache=False)
    assert fake_tune[-1][1]["cache"] is None


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU rule")
def test_default_cache_path_without_gpu(monkeypatch):
    monkeypatch.delenv("FP8GEMM_CACHE", raising=False)
    assert tuning.default_cache_path() is None
    monkeypatch.setenv("FP8GEMM_CACHE", "/tmp/mine.json")
    assert tuning.default_cache_path() == "/tmp/mine.json"
    monkeypatch.setenv("FP8GEMM_CACHE", "off")  # the library's spelling of "no file", not a path
    assert tuning.default_cache_path() is None


def test_tune_model_errors(fake_tune):
    with pytest.raises(ValueError, match="no fp8gemm.nn.Linear running backend 'auto'"):
        fp8gemm.tune_model(nn.Sequential(nn.Linear(16, 16)), max_tokens=8)
    with pytest.raises(ValueError, match="batch_sizes must be a non-empty sequence of positive ints"):
        fp8gemm.tune_model(Model(), max_tokens=8, batch_sizes=(0,))
    with pytest.raises(ValueError, match="max_tokens must be a positive int"):
        fp8gemm.tune_model(Model(), max_tokens=0)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        fp8gemm.tune_model("llama", max_tokens=8)
    assert fake_tune == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
@pytest.mark.parametrize("call", [
    lambda: fp8gemm.tune([(1, 64, 64)]),
    lambda: fp8gemm.tune_model(Model(), max_tokens=4, cache=False),
    lambda: fp8gemm.explain(1, 64, 64),
    lambda: fp8gemm.choose(1, 64, 64),
    lambda: fp8gemm.load_cache("x.json"),
    lambda: fp8gemm.autotune().__enter__(),
], ids=["tune", "tune_model", "explain", "choose", "load_cache", "autotune"])
def test_no_gpu_message(call):
    with pytest.raises(RuntimeError, match=r"^fp8gemm\.\w+ needs a CUDA GPU: "):
        call()


def test_set_log_choices_makes_the_log_visible(monkeypatch):
    from fp8gemm import _log

    logger = logging.getLogger("fp8gemm")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    try:
        fp8gemm.set_log_choices(True)
        assert _log.log_choices and logger.isEnabledFor(logging.INFO) and logger.handlers
    finally:
        fp8gemm.set_log_choices(False)
    assert not _log.log_choices


def test_log_choice_skips_what_has_no_concrete_key():
    from fp8gemm import _log

    # m = 0 (an empty call) and non-int dims (symbolic, while tracing) log nothing and ask nothing.
    _log.log_choice(1, 0, 64, 64, torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16, "auto")
    _log.log_choice(1, object(), 64, 64, torch.float8_e4m3fn, torch.float8_e4m3fn, torch.bfloat16, "auto")


def test_env_turns_the_log_on():
    import subprocess
    import sys
    import os

    code = "import fp8gemm, logging; from fp8gemm import _log; print(_log.log_choices, logging.getLogger('fp8gemm').handlers != [])"
    env = dict(os.environ, FP8GEMM_LOG_CHOICES="1", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"], out.stderr
