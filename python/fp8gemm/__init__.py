"""fp8gemm for PyTorch: FlashInfer's bmm_fp8 on fp8gemm's kernels and autotuner.

    out[b, m, n] = A_scale * B_scale * A[b] @ B[b]

A [b, m, k] float8 (e4m3 or e5m2), contiguous. B [b, k, n] float8, column-major: a weight
W [n, k] is passed as W.t() (W.transpose(-2, -1) for a batch [b, n, k]). A_scale, B_scale:
float32 CUDA tensors with one element (never read on the host). out: [b, m, n] bfloat16 or
float16. Replacing FlashInfer is a one-line change:

    from fp8gemm import bmm_fp8          # was: from flashinfer import bmm_fp8

The operators are torch.ops.fp8gemm.{bmm_fp8, bmm_fp8_out, gemm_fp8, gemm_fp8_out}: they run
on torch's current stream, take their workspace from torch's caching allocator, are legal in
CUDA-graph capture and trace under torch.compile(fullgraph=True). See docs/torch.md.
"""

from __future__ import annotations

import contextlib
import json
from typing import Iterable, Iterator, Optional, Sequence

import torch

from . import _backends, _library, _log
from .distributed import DEFAULT_TIMEOUT_S as _DEFAULT_TIMEOUT_S

__all__ = [
    "bmm_fp8", "gemm_fp8", "linear_fp8", "quantize_fp8", "autotune", "tune", "explain", "choose", "load_cache",
    "merge_cache",
    "save_cache", "clear_cache", "info", "BACKENDS", "nn", "quantize_", "tune_model", "set_log_choices",
    "default_cache_path", "hf_config_linears", "release_tuning_buffers", "release_stream", "export_entries",
    "import_entries", "GroupError", "GroupTimeoutError", "load_fp8_checkpoint",
]
__version__ = "0.1.0"

# "auto" picks per shape (tuned cache, built-in table, cuBLASLt heuristic). FlashInfer's
# spelling "cublas" means "cublaslt"; a full tactic name ("cublaslt:algo=...") is accepted too.
BACKENDS = ("auto",) + _backends.NAMES

_ops = torch.ops.fp8gemm
_bmm = _ops.bmm_fp8.default
_bmm_out = _ops.bmm_fp8_out.default
_gemm = _ops.gemm_fp8.default
_gemm_out = _ops.gemm_fp8_out.default
_linear = _ops.linear_fp8.default
_linear_dynamic = _ops.linear_fp8_dynamic.default


def bmm_fp8(A: torch.Tensor, B: torch.Tensor, A_scale: torch.Tensor, B_scale: torch.Tensor,
            dtype: torch.dtype, out: Optional[torch.Tensor] = None, backend: str = "auto") -> torch.Tensor:
    """FlashInfer's bmm_fp8: out[b] = A_scale * B_scale * A[b] @ B[b], returned (and written to
    `out` when given). Raises TypeError for a wrong dtype, ValueError for a wrong shape, layout,
    device or size, RuntimeError when the named backend cannot run the problem."""
    if _log.log_choices and A.dim() == 3 and A.is_cuda:
        _log.log_choice(A.shape[0], A.shape[1], B.shape[2], A.shape[2], A.dtype, B.dtype, dtype, backend)
    if out is None:
        return _bmm(A, B, A_scale, B_scale, dtype, backend)
    _bmm_out(A, B, A_scale, B_scale, dtype, out, backend)
    return out


def gemm_fp8(A: torch.Tensor, B: torch.Tensor, A_scale: torch.Tensor, B_scale: torch.Tensor,
             dtype: torch.dtype, out: Optional[torch.Tensor] = None, backend: str = "auto") -> torch.Tensor:
    """bmm_fp8 without the batch dimension: A [m, k] contiguous, B [k, n] column-major (W.t())."""
    if _log.log_choices and A.dim() == 2 and A.is_cuda:
        _log.log_choice(1, A.shape[0], B.shape[1], A.shape[1], A.dtype, B.dtype, dtype, backend)
    if out is None:
        return _gemm(A, B, A_scale, B_scale, dtype, backend)
    _gemm_out(A, B, A_scale, B_scale, dtype, out, backend)
    return out


def linear_fp8(x: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor,
               input_scale: Optional[torch.Tensor] = None, bias: Optional[torch.Tensor] = None,
               out_dtype: Optional[torch.dtype] = None, backend: str = "auto", return_scale: bool = False):
    """The FP8 linear layer in one op: y = e4m3(x / s) @ weight.T * s * weight_scale (+ bias).

    x [..., k] bfloat16/float16, contiguous; weight [n, k] float8 as stored; weight_scale and
    input_scale float32 CUDA tensors with one element. input_scale None: dynamic, s = amax(|x|) /
    448 computed on the GPU (no host sync); return_scale=True then returns (y, s). bias [n] in
    out_dtype (default: x's dtype), added in float32 before the output is rounded. The activations
    are quantized by fp8gemm's kernel (bit for bit fp8gemm.scaling's rule) and the GEMM is "auto"'s
    choice for (M bucket, n, k, bias), or `backend`. docs/linear.md."""
    if _log.log_choices and x.is_cuda and x.dim() >= 1 and weight.dim() == 2:
        _log.log_choice(1, x.numel() // max(x.shape[-1], 1), weight.shape[0], weight.shape[1], torch.float8_e4m3fn,
                        weight.dtype, out_dtype or x.dtype, backend,
                        nn.layer_spec(input_scale is None, bias is not None))
    if input_scale is None:
        y, scale = _linear_dynamic(x, weight, weight_scale, bias, out_dtype, backend)
        return (y, scale) if return_scale else y
    if return_scale:
        raise ValueError("linear_fp8: return_scale=True is for the dynamic scale (input_scale=None); a static "
                         "input_scale is the scale")
    return _linear(x, weight, weight_scale, input_scale, bias, out_dtype, backend)


def quantize_fp8(x: torch.Tensor, scale: Optional[torch.Tensor] = None):
    """(x / scale in e4m3, scale): the layer's activation quantization on its own. scale None:
    dynamic (amax(|x|) / 448, computed on x's device). x bfloat16/float16, contiguous, last dim a
    multiple of 16; on the GPU fp8gemm's kernel, on the CPU its host reference (the same bits)."""
    if scale is None:
        return _ops.quantize_fp8_dynamic.default(x)
    return _ops.quantize_fp8.default(x, scale), scale


@contextlib.contextmanager
def autotune(enabled: bool = True, cache: Optional[str] = None, *, tune_mode: Optional[bool] = None,
             group=None, strategy: Optional[str] = None, timeout: float = _DEFAULT_TIMEOUT_S) -> Iterator[None]:
    """FlashInfer's `with autotune(...)`: while inside (scopes nest), each "auto" call whose key
    (dtypes, batch, M bucket, N, K) is not tuned yet is measured first, on any thread, except
    while its stream is being captured into a CUDA graph. With `cache`, the file is merged in
    first and saved (merged with what is on disk) at exit. `tune_mode` is FlashInfer's name for
    `enabled`.

    group: a torch.distributed process group (every rank enters the scope with the same
    arguments): at exit, every key a rank tuned inside gets the same entry on every rank (strategy
    "broadcast": the lowest rank's that tuned it; "merge", the default: the ranks that tuned it in
    turn), before the cache is saved; `timeout` (s): how long a rank waits for the others there.
    Capture CUDA graphs after the scope: inside it, ranks may still run different tactics."""
    if tune_mode is not None:
        enabled = tune_mode
    in_group = distributed.group_of(group, strategy, timeout, "fp8gemm.autotune")
    if in_group and enabled:
        with distributed.autotune_in_group(*in_group, True, str(cache) if cache else None):
            yield
        return
    handle = _ops.autotune_begin.default(bool(enabled), str(cache) if cache else "")
    try:
        yield
    finally:
        _ops.autotune_end.default(handle)


def _problems(shapes: Iterable[Sequence[int]], batch: int) -> list:
    flat = []
    for s in shapes:
        s = tuple(int(v) for v in s)
        if len(s) == 3:
            s = (batch,) + s
        if len(s) != 4:
            raise ValueError(f"tune: each shape must be (m, n, k) or (batch, m, n, k), got {s}")
        flat.extend(s)
    return flat


def tune(shapes: Iterable[Sequence[int]], *, dtype: torch.dtype = torch.bfloat16,
         a_dtype: torch.dtype = torch.float8_e4m3fn, b_dtype: torch.dtype = torch.float8_e4m3fn,
         batch: int = 1, key_budget_ms: float = 100.0, run_budget_ms: float = 0.0,
         backends: Optional[Sequence[str]] = None, retune: bool = False,
         cache: Optional[str] = None, group=None, strategy: Optional[str] = None,
         timeout: float = _DEFAULT_TIMEOUT_S, layer: str = "") -> list:
    """Tunes the keys of `shapes` ((m, n, k) or (batch, m, n, k); m is rounded up to its bucket)
    on the current GPU and keeps the choices for "auto" calls. With `cache`, the file is refused
    before anything is measured when save_cache would refuse it, merged in first and saved after
    (one tune_into_cache). Returns one decision (a dict: key, choice, default, times, reason,
    every candidate) per shape.

    layer: "" tunes the GEMM's keys; "static", "dynamic" (with "+bias"), the linear layer's
    (linear_fp8 with that activation scale, activations of `dtype`): its quantization is timed
    with each GEMM tactic; "bias": the GEMM with a bias. docs/linear.md.

    group: a torch.distributed process group; every rank calls tune with the same arguments
    (shapes may differ: the union is tuned) and ends with the same entries for every key of the
    call. strategy "merge" (the default) splits the keys over the ranks and gathers every share,
    "broadcast" tunes every key on rank 0 and sends the entries; a key a rank fails keeps the
    default on every rank (a RuntimeWarning names it). run_budget_ms applies to each rank's
    share. `timeout` (s): how long a rank waits for the others at each step (after tuning, it
    includes the slowest rank's share); past it, GroupTimeoutError names the ranks that did not
    answer. Each decision also says "tuned_on_rank". docs/torch.md "Tensor-parallel tuning"."""
    problems = _problems(shapes, batch)
    in_group = distributed.group_of(group, strategy, timeout, "fp8gemm.tune")
    if in_group:
        call = distributed.TuneCall(a_dtype, b_dtype, dtype, key_budget_ms, run_budget_ms, backends, retune,
                                    in_group[1], layer)
        return distributed.tune_in_group(*in_group, problems, call, str(cache) if cache else None)
    text = _ops.tune.default(problems, a_dtype, b_dtype, dtype, float(key_budget_ms),
                             float(run_budget_ms), list(backends or []), bool(retune), str(layer),
                             str(cache) if cache else "")
    return json.loads(text)["decisions"]


def explain(m: int, n: int, k: int, *, dtype: torch.dtype = torch.bfloat16,
            a_dtype: torch.dtype = torch.float8_e4m3fn, b_dtype: torch.dtype = torch.float8_e4m3fn,
            batch: int = 1, key_budget_ms: float = 100.0, measure: bool = True, layer: str = "") -> str:
    """What "auto" runs for this shape now and (measure=True) why: every candidate's time, the
    noise floor, the default, the choice and the reason. Measures afresh, in memory only. layer:
    as tune's (the linear layer's key)."""
    return _ops.explain.default(batch, m, n, k, a_dtype, b_dtype, dtype, float(key_budget_ms), bool(measure),
                                str(layer))


def choose(m: int, n: int, k: int, *, backend: str = "auto", dtype: torch.dtype = torch.bfloat16,
           a_dtype: torch.dtype = torch.float8_e4m3fn, b_dtype: torch.dtype = torch.float8_e4m3fn,
           batch: int = 1, layer: str = "") -> str:
    """The canonical name of the tactic a call would run now (nothing is measured). layer: as
    tune's: the GEMM tactic fp8gemm.linear_fp8 runs after quantizing."""
    return _ops.choose.default(batch, m, n, k, a_dtype, b_dtype, dtype, backend, str(layer))


def load_cache(path: str) -> int:
    """Replaces the tuned choices with the file's valid entries; returns how many were kept. A
    corrupt, foreign-GPU or old-version file is reported once (a Python warning) and ignored
    (returns 0)."""
    return _ops.load_cache.default(str(path))


def merge_cache(path: str) -> int:
    """Adds the file's entries, keeping the in-memory ones on conflict."""
    return _ops.merge_cache.default(str(path))


def save_cache(path: str) -> None:
    """Writes the tuned choices, merged with what the file holds, atomically."""
    _ops.save_cache.default(str(path))


def clear_cache() -> None:
    """Forgets every tuned choice in memory (the built-in table still applies)."""
    _ops.clear_cache.default()


def info() -> dict:
    """Library version, the current GPU and each backend with whether it is available (and why
    not); without a GPU, the reason."""
    return json.loads(_ops.info.default())


# The modules on top of the ops (imported last: they use the ops registered above).
from . import distributed, nn  # noqa: E402
from .distributed import GroupError, GroupTimeoutError, export_entries, import_entries  # noqa: E402
from ._log import set_log_choices  # noqa: E402
from .quantize import quantize_  # noqa: E402
from .tuning import default_cache_path, tune_model  # noqa: E402
from .models import HfConfigLinears, ModelLinear, hf_config_linears  # noqa: E402
from .checkpoint import load_fp8_checkpoint  # noqa: E402


def release_tuning_buffers() -> None:
    """Frees the tuner's GPU buffers (weight copies of the shapes it timed) on the current GPU now;
    they are also freed when the last autotune scope ends."""
    _ops.release_tuning_buffers.default()


def release_stream(stream: "torch.cuda.Stream") -> bool:
    """Frees the workspace fp8gemm keeps for `stream` (32 MiB per stream that ran a GEMM). Call it
    before the stream is destroyed, once no CUDA graph captured on it can replay; refused while
    it is being captured. Returns whether there was one."""
    if not isinstance(stream, torch.cuda.Stream):
        raise TypeError(f"release_stream: stream must be a torch.cuda.Stream, got {type(stream).__name__}")
    return bool(_ops.release_stream.default(stream.cuda_stream))
