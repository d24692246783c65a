"""Finds and loads libfp8gemm_torch.so, which registers the torch.ops.fp8gemm operators.

The library is plain C++ on libtorch (TORCH_LIBRARY, no Python C-API), so one build serves
every Python version of the torch it was built against. It is looked up
  1. at $FP8GEMM_TORCH_LIBRARY (a path to the .so: development builds, carried bundles),
  2. next to this file (what `pip install .` installs).
"""

import os
from pathlib import Path

import torch

LIBRARY_NAME = "libfp8gemm_torch.so"


def _candidates():
    env = os.environ.get("FP8GEMM_TORCH_LIBRARY")
    if env:
        yield Path(env)
    yield Path(__file__).with_name(LIBRARY_NAME)


def check_torch_abi(path: Path) -> None:
    """Raises ImportError when the library at `path` was built against another torch minor version
    than the one imported (its C++ ABI differs: loading it could fail on missing symbols or crash
    later). The version is in `<library>.torch` beside it, written by the build; a library without
    one (a development build) is not checked."""
    record = path.with_name(path.name + ".torch")
    if not record.is_file():
        return
    built = record.read_text().strip()
    here = torch.__version__.split("+")[0]
    if built.split(".")[:2] != here.split(".")[:2]:
        raise ImportError(
            f"fp8gemm: {path} was built against torch {built}, but torch {torch.__version__} is imported: the "
            "extension uses torch's C++ ABI, which changes between minor versions. Rebuild it against this torch "
            "(from the fp8gemm checkout: pip install --no-build-isolation --force-reinstall .)")


def load() -> Path:
    tried = []
    for path in _candidates():
        if path.is_file():
            check_torch_abi(path)
            torch.ops.load_library(str(path))
            return path
        tried.append(str(path))
    raise ImportError(
        f"fp8gemm: {LIBRARY_NAME} not found (tried {', '.join(tried)}). Install the package with "
        "`pip install .` from the fp8gemm checkout, or build it (cmake -DFP8GEMM_BUILD_TORCH=ON) and "
        "set FP8GEMM_TORCH_LIBRARY to the built .so."
    )


path = load()


def _warn(message: str) -> None:
    import warnings

    warnings.warn(message, UserWarning, stacklevel=2)


# The library's warnings come back through fp8gemm::_warn (python/csrc/warnings_to_python.cpp).
_warn_impl = torch.library.Library("fp8gemm", "IMPL")
_warn_impl.impl("_warn", _warn, "CompositeImplicitAutograd")
