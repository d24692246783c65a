"""The linear layers a model runs, from its Hugging Face config.json, per tensor-parallel rank:
the same parser as `fp8gemm tune --hf-config` (include/fp8gemm/models.h). Needs no GPU.

    linears, notes = fp8gemm.hf_config_linears("Llama-3.1-8B/", tp=8)
    fp8gemm.tune([(m, l.n, l.k) for l in linears if l.supported for m in (1, 16, 128)])
"""

from __future__ import annotations

import json
import os
from typing import List, NamedTuple, Union

import torch

from . import _library  # noqa: F401  (registers torch.ops.fp8gemm)


class ModelLinear(NamedTuple):
    """One kind of linear layer on one rank: weight W[n, k], held by `count` of the model's layers.
    `parallel` is "column" (N split across ranks) or "row" (K split); `unsupported` is empty when
    fp8gemm can run the shape, else why not (N or K not a multiple of 16)."""

    name: str
    n: int
    k: int
    count: int
    parallel: str
    unsupported: str

    @property
    def supported(self) -> bool:
        return not self.unsupported


class HfConfigLinears(NamedTuple):
    """The linears in the order a layer runs them, and what the parser noted (defaults it took,
    KV heads replicated across ranks, shapes fp8gemm cannot run)."""

    linears: List[ModelLinear]
    notes: List[str]


def hf_config_linears(path: Union[str, os.PathLike], tp: int = 1) -> HfConfigLinears:
    """The linears of the config.json at `path` (a file, or a folder holding config.json) at
    tensor-parallel degree `tp`, sharded as vLLM shards them (fused qkv and gate_up; Nemotron-H's
    Mamba in_proj/out_proj and MLP). Raises ValueError naming the field for a field it needs and
    does not find, an unknown architecture, or a setting that would change the shapes in a way it
    does not model, and naming the rule for a `tp` the model cannot be split by."""
    if isinstance(tp, bool) or not isinstance(tp, int):
        raise TypeError(f"hf_config_linears: tp must be an int, got {type(tp).__name__}")
    result = json.loads(torch.ops.fp8gemm.hf_config_linears.default(os.fspath(path), tp))
    linears = [ModelLinear(**linear) for linear in result["linears"]]
    return HfConfigLinears(linears, list(result["notes"]))
