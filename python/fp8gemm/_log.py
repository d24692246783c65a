"""fp8gemm's Python messages: the logger "fp8gemm" (informational lines) and, when asked for, one
line per new key naming the tactic that key runs.

The choice log is off by default; FP8GEMM_LOG_CHOICES=1 in the environment or
fp8gemm.set_log_choices(True) turns it on. It logs at INFO on "fp8gemm"; where the program has
configured no logging at all, turning it on also attaches a stderr handler so that the lines show.
"""

import logging
import os
import threading

import torch

logger = logging.getLogger("fp8gemm")

_lock = threading.Lock()
_seen = set()
log_choices = os.environ.get("FP8GEMM_LOG_CHOICES", "").strip() not in ("", "0")


def _ensure_visible():
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    if not logger.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logger.addHandler(handler)


def set_log_choices(enabled: bool = True) -> None:
    """Logs (INFO, logger "fp8gemm") the tactic each new (dtypes, batch, M bucket, N, K, backend)
    key runs, once per key and process, for calls through fp8gemm.bmm_fp8 / gemm_fp8 and
    fp8gemm.nn.Linear. Calls inside torch.compile'd code are not logged (the log is a host call)."""
    global log_choices
    log_choices = bool(enabled)
    if log_choices:
        _ensure_visible()


def _short(dtype: torch.dtype) -> str:
    return {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2", torch.bfloat16: "bf16",
            torch.float16: "fp16"}.get(dtype, str(dtype))


def log_choice(batch, m, n, k, a_dtype, b_dtype, out_dtype, backend, layer: str = "") -> None:
    """Logs the key's tactic the first time the key is seen; `layer` (as fp8gemm.tune's) for the
    linear layer's key, whose GEMM tactic is logged. A call being traced (torch.compile, symbolic
    shapes) or on a device other than CUDA is skipped: there is no concrete key."""
    if torch.compiler.is_compiling() or not all(isinstance(v, int) for v in (batch, m, n, k)) or m < 1:
        return
    bucket = torch.ops.fp8gemm.m_bucket.default(m)
    key = (batch, bucket, n, k, a_dtype, b_dtype, out_dtype, backend, layer)
    with _lock:
        if key in _seen:
            return
        _seen.add(key)
    tactic = torch.ops.fp8gemm.choose.default(batch, m, n, k, a_dtype, b_dtype, out_dtype, backend, layer)
    logger.info("%sx%s->%s b=%d m=%d (bucket m<=%d) n=%d k=%d backend=%s%s runs %s", _short(a_dtype),
                _short(b_dtype), _short(out_dtype), batch, m, bucket, n, k, backend,
                f" layer={layer}" if layer else "", tactic)


if log_choices:
    _ensure_visible()
