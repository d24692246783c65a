"""The package's lifetime and location calls on a machine without a GPU: argument errors first,
then fp8gemm's own no-GPU message; the HF config reader is exported at the top level."""
import warnings

import pytest
import torch

import fp8gemm


def test_release_stream_wants_a_torch_stream():
    with pytest.raises(TypeError, match="release_stream: stream must be a torch.cuda.Stream"):
        fp8gemm.release_stream(12345)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_release_tuning_buffers_says_it_needs_a_gpu():
    with pytest.raises(RuntimeError, match=r"^fp8gemm\.release_tuning_buffers needs a CUDA GPU: "):
        fp8gemm.release_tuning_buffers()


@pytest.mark.skipif(torch.cuda.is_available(), reason="without a GPU the library has no device to name a file for")
def test_default_cache_path_without_a_gpu_is_the_named_file_or_none(monkeypatch):
    monkeypatch.delenv("FP8GEMM_CACHE", raising=False)
    assert fp8gemm.default_cache_path() is None
    monkeypatch.setenv("FP8GEMM_CACHE", "/tmp/tuned.json")
    assert fp8gemm.default_cache_path() == "/tmp/tuned.json"


def test_hf_config_linears_is_exported():
    assert "hf_config_linears" in fp8gemm.__all__
    assert callable(fp8gemm.hf_config_linears)


def test_library_warnings_reach_python_warnings():
    # fp8gemm::_warn is the route of the library's warnings (python/csrc/warnings_to_python.cpp);
    # the GPU test test_nn_gpu.py::test_library_warnings_are_python_warnings takes it end to end.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ops.fp8gemm._warn("fp8gemm: a test warning")
    assert [str(w.message) for w in caught] == ["fp8gemm: a test warning"]
    assert caught[0].category is UserWarning
