"""fp8gemm.tune_model: tunes what a model's fp8gemm Linear layers run, over every M bucket up to
the largest token count the model will see, and saves the cache where "auto" loads it from."""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import torch

from ._log import logger
from .distributed import DEFAULT_TIMEOUT_S
from .nn import Linear, layer_spec

__all__ = ["tune_model", "tune_layers", "model_shapes", "model_layers", "m_buckets", "default_cache_path"]


def m_buckets(max_tokens: int) -> List[int]:
    """Every M bucket edge up to the bucket of max_tokens, ascending: tuning these covers every
    M in [1, max_tokens] (the library's m_bucket map, so the edges are never copied here)."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    bucket = torch.ops.fp8gemm.m_bucket.default
    edges, edge, last = [], 0, bucket(max_tokens)
    while edge < last:
        edge = bucket(edge + 1)
        edges.append(edge)
    return edges


def model_shapes(model: torch.nn.Module) -> List[Tuple[int, int, torch.dtype]]:
    """(N, K, out dtype) of every fp8gemm.nn.Linear of `model` that runs "auto", each once, in the
    order the layers appear. Layers pinned to another backend have nothing to tune."""
    seen, shapes = set(), []
    for module in model.modules():
        if isinstance(module, Linear) and module.backend == "auto":
            shape = (module.out_features, module.in_features, module.out_dtype)
            if shape not in seen:
                seen.add(shape)
                shapes.append(shape)
    return shapes


def model_layers(model: torch.nn.Module) -> List[Tuple[int, int, torch.dtype, str]]:
    """(N, K, out dtype, layer) of every fp8gemm.nn.Linear of `model` that runs "auto", each once,
    in the order the layers appear: the linear layer's tuning keys (layer as fp8gemm.tune's)."""
    seen, layers = set(), []
    for module in model.modules():
        if isinstance(module, Linear) and module.backend == "auto":
            key = (module.out_features, module.in_features, module.out_dtype,
                   layer_spec(module.dynamic, module.bias is not None))
            if key not in seen:
                seen.add(key)
                layers.append(key)
    return layers


def default_cache_path() -> Optional[str]:
    """The cache file "auto" loads on first use and tuning writes, as the library reports it
    (torch.ops.fp8gemm.default_cache_path on a GPU), else the file $FP8GEMM_CACHE names as the
    library reads it (`off`: none), else None (tuned choices stay in memory)."""
    ops = torch.ops.fp8gemm
    if torch.cuda.is_available():
        path = ops.default_cache_path.default()
        if path:
            return path
    return ops.env_cache_path.default() or None


def _positive_ints(name: str, values: Iterable[int]) -> Tuple[int, ...]:
    values = tuple(values)
    if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise ValueError(f"{name} must be a non-empty sequence of positive ints, got {values!r}")
    return values


def tune_model(model: torch.nn.Module, max_tokens: int, *, cache: Union[str, os.PathLike, None, bool] = None,
               batch_sizes: Sequence[int] = (1,), key_budget_ms: float = 100.0, run_budget_ms: float = 0.0,
               backends: Optional[Sequence[str]] = None, retune: bool = False, group=None,
               strategy: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT_S) -> list:
    """Tunes every fp8gemm.nn.Linear of `model` as the layer it runs (its (N, K, out dtype, scale
    mode, bias), each once: the layer's keys, quantization timed with each GEMM tactic) at every
    M bucket up to max_tokens (M = tokens per forward: batch x sequence) with fp8gemm.tune, and
    returns the decisions (dicts, as fp8gemm.tune's). The keys assume activations of the output
    dtype, as models run them. batch_sizes: the bmm batch of the keys
    (fp8gemm.nn.Linear runs batch 1). cache: a path to merge in first and save after; None: the
    library's default location (default_cache_path()), or memory only where there is none;
    False: memory only. What engines do with a dummy forward inside FlashInfer's autotune context,
    without running the model. group, strategy, timeout: as fp8gemm.tune's (every rank of a
    tensor-parallel group ends with the same entries; merge splits the keys over the ranks)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"tune_model: model must be a torch.nn.Module, got {type(model).__name__}")
    layers = model_layers(model)
    if not layers:
        raise ValueError("tune_model: the model has no fp8gemm.nn.Linear running backend 'auto' (swap its layers "
                         "with fp8gemm.quantize_ first)")
    return tune_layers(layers, max_tokens, cache=cache, batch_sizes=batch_sizes, key_budget_ms=key_budget_ms,
                       run_budget_ms=run_budget_ms, backends=backends, retune=retune, group=group, strategy=strategy,
                       timeout=timeout)


def tune_layers(layers: Sequence[Tuple[int, int, torch.dtype, str]], max_tokens: int, *,
                cache: Union[str, os.PathLike, None, bool] = None, batch_sizes: Sequence[int] = (1,),
                key_budget_ms: float = 100.0, run_budget_ms: float = 0.0, backends: Optional[Sequence[str]] = None,
                retune: bool = False, group=None, strategy: Optional[str] = None,
                timeout: float = DEFAULT_TIMEOUT_S) -> list:
    """tune_model for layers given as (N, K, out dtype, layer) (layer as fp8gemm.tune's), as the
    engine adapters record them (fp8gemm.integrations): every M bucket up to max_tokens, one
    fp8gemm.tune call per (out dtype, layer) group. Arguments as tune_model's."""
    from . import tune  # looked up on the package at call time (tests replace it)

    ms = m_buckets(max_tokens)
    batches = _positive_ints("batch_sizes", batch_sizes)
    layers = list(dict.fromkeys(tuple(layer) for layer in layers))
    if not layers:
        raise ValueError("tune_layers: layers must name at least one (N, K, out dtype, layer)")
    path = None if cache is False else (os.fspath(cache) if cache else default_cache_path())
    logger.info("tune: %d layer key(s) x %d M bucket(s) (up to %d) x %d batch size(s); cache %s", len(layers),
                len(ms), ms[-1], len(batches), path or "in memory only")
    decisions = []
    for out_dtype, layer in dict.fromkeys((dtype, spec) for _, _, dtype, spec in layers):
        problems = [(b, m, n, k) for n, k, dtype, spec in layers if (dtype, spec) == (out_dtype, layer)
                    for b in batches for m in ms]
        decisions += tune(problems, dtype=out_dtype, key_budget_ms=key_budget_ms, run_budget_ms=run_budget_ms,
                          backends=backends, retune=retune, cache=path, group=group, strategy=strategy,
                          timeout=timeout, layer=layer)
    return decisions
