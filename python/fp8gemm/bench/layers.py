"""The linear layers of one decode step: a model preset (fp8gemm.suite.MODELS: one decoder
layer's linears, repeated --layers times) or a Hugging Face config.json through
fp8gemm.hf_config_linears(path, tp) (per-rank shapes)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional

from ..suite import MODELS


@dataclass(frozen=True)
class LinearShape:
    name: str
    n: int
    k: int
    copies: int  # how many of this linear one step runs (decoder layers that have it)


@dataclass(frozen=True)
class StepModel:
    label: str
    linears: List[LinearShape]

    @property
    def gemms(self) -> int:
        return sum(s.copies for s in self.linears)

    def weight_bytes(self) -> int:
        return sum(s.n * s.k * s.copies for s in self.linears)

    def describe(self) -> str:
        parts = ", ".join(f"{s.name} {s.n}x{s.k} x{s.copies}" for s in self.linears)
        return f"{self.label}: {self.gemms} GEMMs per step, {self.weight_bytes() / 2**30:.2f} GiB of FP8 weights ({parts})"


def preset(name: str, layers: int) -> StepModel:
    if name not in MODELS:
        raise ValueError(f"--model: unknown preset '{name}'; expected one of {', '.join(MODELS)}")
    return StepModel(name, [LinearShape(label, n, k, layers) for label, n, k in MODELS[name]])


def _field(item, *names):
    for name in names:
        if isinstance(item, dict) and name in item:
            return item[name]
        if hasattr(item, name):
            return getattr(item, name)
    return None


def _normalize(item, layers: int) -> LinearShape:
    """One entry of hf_config_linears: (name, n, k[, count]), a dict or an object with name / n /
    k and optionally count (the decoder layers that have it)."""
    if isinstance(item, (tuple, list)):
        if len(item) not in (3, 4):
            raise ValueError(f"hf_config_linears returned {item!r}: expected (name, n, k) or (name, n, k, count)")
        name, n, k = item[:3]
        count = item[3] if len(item) == 4 else None
    else:
        name, n, k = _field(item, "name", "label"), _field(item, "n", "N"), _field(item, "k", "K")
        count = _field(item, "count", "layers", "copies")
        if n is None or k is None:
            raise ValueError(f"hf_config_linears returned {item!r}: no n/k fields")
    return LinearShape(str(name), int(n), int(k), int(count) if count else layers)


def from_hf_config(path: str, tp: int, layers: int, label: Optional[str] = None) -> StepModel:
    """Per-rank linears of a config.json (or a folder holding one) at tensor-parallel degree tp.
    Linears that say how many decoder layers have them (hybrids) keep that count; the others
    run `layers` times."""
    try:
        from .. import hf_config_linears
    except ImportError as e:
        raise ImportError("--hf-config needs fp8gemm.hf_config_linears (python/fp8gemm/models.py), which this "
                           f"build of the package does not have: {e}") from None
    items = list(hf_config_linears(path, tp))
    if not items:
        raise ValueError(f"--hf-config {path}: no linear layers found")
    base = os.path.basename(os.path.normpath(path))
    if base == "config.json":
        base = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return StepModel(label or f"{os.path.splitext(base)[0]}_tp{tp}", [_normalize(i, layers) for i in items])
