"""pytest setup for the fp8gemm torch extension.

The package is imported from where it is installed (`pip install .`), or, when
FP8GEMM_TORCH_LIBRARY names a built libfp8gemm_torch.so, from this checkout's python/ with that
library (development builds and the bundle scripts/gpu_torch_suite.sh runs).
"""

import os
import sys
from pathlib import Path

import pytest

if os.environ.get("FP8GEMM_TORCH_LIBRARY"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402

HAS_GPU = torch.cuda.is_available()
requires_gpu = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def pytest_report_header(config):
    import fp8gemm

    return [f"fp8gemm {fp8gemm.__version__}: {fp8gemm._library.path}", f"torch {torch.__version__}, "
            f"GPU: {torch.cuda.get_device_name() if HAS_GPU else 'none (GPU tests skip)'}"]


@pytest.fixture
def fake_tune(monkeypatch):
    """fp8gemm.tune replaced by a recorder of its calls: (problems, keyword arguments) each."""
    import fp8gemm

    calls = []

    def tune(problems, **kwargs):
        calls.append((list(problems), kwargs))
        return [{"key": str(p)} for p in problems]

    monkeypatch.setattr(fp8gemm, "tune", tune)
    return calls
