"""The linear layers of one decode step: a model preset (fp8gemm.suite.MODELS or BENCH_MODELS
below: one decoder layer's linears, repeated --layers times) or a Hugging Face config.json through
fp8gemm.hf_config_linears(path, tp) (per-rank shapes, --layers decoder layers' worth)."""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import List, Optional

from ..suite import MODELS

# Benchmark-only presets (not in the CLI's suite): per-rank (name, N, K) of one decoder layer.
BENCH_MODELS = {
    # Qwen3-4B: hidden 2560, 32 heads and 8 KV heads of 128, intermediate 9728.
    "qwen3_4b": [("qwen3_4b.qkv", 6144, 2560), ("qwen3_4b.o", 2560, 4096), ("qwen3_4b.gate_up", 19456, 2560),
                 ("qwen3_4b.down", 2560, 9728)],
    # Mistral-Large-2407 at TP 8: hidden 12288, 96 heads and 8 KV heads of 128, intermediate 28672.
    "mistral_large_tp8": [("mistral_large_tp8.qkv", 1792, 12288), ("mistral_large_tp8.o", 12288, 1536),
                          ("mistral_large_tp8.gate_up", 7168, 12288), ("mistral_large_tp8.down", 12288, 3584)],
}
PRESETS = {**MODELS, **BENCH_MODELS}


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
    """A preset of fp8gemm.suite.MODELS or BENCH_MODELS, `layers` decoder layers' worth."""
    if name not in PRESETS:
        raise ValueError(f"--model: unknown preset '{name}'; expected one of {', '.join(PRESETS)}")
    return StepModel(name, [LinearShape(label, n, k, layers) for label, n, k in PRESETS[name]])


def from_hf_config(path: str, tp: int, layers: int, label: Optional[str] = None) -> StepModel:
    """Per-rank linears of a config.json (or a folder holding one) at tensor-parallel degree tp,
    `layers` decoder layers' worth: the most common linear runs `layers` times and the others keep
    their share of the model's layers (a hybrid's 4 attention layers of 52 stay 1 in 6). Linears
    fp8gemm cannot run (N or K not a multiple of 16 after sharding) are left out with a note."""
    from .. import hf_config_linears

    items = hf_config_linears(path, tp).linears
    skipped = [i for i in items if i.unsupported]
    for i in skipped:
        print(f"decode_step: {path} tp={tp}: {i.name} {i.n}x{i.k} left out: {i.unsupported}", file=sys.stderr)
    items = [i for i in items if not i.unsupported]
    if not items:
        raise ValueError(f"--hf-config {path}: no linear layer fp8gemm can run at tp={tp}")
    most = max(i.count for i in items)
    base = os.path.basename(os.path.normpath(path))
    if base == "config.json":
        base = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return StepModel(label or f"{os.path.splitext(base)[0]}_tp{tp}",
                     [LinearShape(i.name, i.n, i.k, max(1, math.ceil(i.count * layers / most))) for i in items])
