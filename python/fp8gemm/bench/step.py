"""The decode-step benchmark: every linear of a step (L decoder layers, distinct weights) in one
CUDA graph per contender, per-step time at each M, contenders replayed round-robin:

  torch     torch._scaled_mm, per-tensor scales, fast accumulation (cuBLASLt's default tactic)
  untuned   fp8gemm's "auto" before any tuning (the built-in table, else cuBLASLt's heuristic),
            each GEMM run by the tactic name auto picked
  tuned     fp8gemm's "auto" after fp8gemm.tune of every (M bucket, N, K) of the run

The same inputs for all: FP8 e4m3 activations [M, K] (one per K), the weights, 0-d float32
scales on the GPU, bf16 out. The torch graph is timed twice per round; the two medians' spread is
the point's noise.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch

import fp8gemm

from .graphs import capture, time_round_robin
from .layers import StepModel

E4M3 = torch.float8_e4m3fn
OUT = torch.bfloat16
CONTENDERS = ("torch", "untuned", "tuned")
# A plan says how each linear of the step runs: ("torch",) or ("fp8gemm", backend or tactic).
Plan = Dict[str, Tuple[str, ...]]


def random_fp8(*shape, seed: int = 0) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.empty(shape, dtype=torch.bfloat16, device="cuda").normal_(0, 2, generator=g).to(E4M3)


class StepInputs:
    """The step's weights ([copies, N, K] per linear: every GEMM of the step reads its own) and
    scales; activations per M (one [M, K] per K, shared by the step's GEMMs of that K)."""

    def __init__(self, model: StepModel):
        self.model = model
        self.weights = {s.name: random_fp8(s.copies, s.n, s.k, seed=i) for i, s in enumerate(model.linears)}
        self.a_scale = torch.tensor(0.5, device="cuda")
        self.b_scale = torch.tensor(0.25, device="cuda")

    def activations(self, m: int) -> Dict[int, torch.Tensor]:
        return {k: random_fp8(m, k, seed=1000 + k) for k in sorted({s.k for s in self.model.linears})}

    def order(self, names: Optional[Iterable[str]] = None) -> List[Tuple[str, int]]:
        """(linear, copy) in step order: layer by layer, each layer's linears in model order."""
        keep = set(names) if names is not None else None
        linears = [s for s in self.model.linears if keep is None or s.name in keep]
        depth = max((s.copies for s in linears), default=0)
        return [(s.name, i) for i in range(depth) for s in linears if i < s.copies]


def gemm_call(inputs: StepInputs, A: torch.Tensor, name: str, copy: int, how: Tuple[str, ...],
              out: Optional[torch.Tensor] = None) -> Callable[[], object]:
    W = inputs.weights[name][copy]
    sa, sb = inputs.a_scale, inputs.b_scale
    if how[0] == "torch":
        if out is not None:
            return lambda: torch._scaled_mm(A, W.t(), sa, sb, out_dtype=OUT, use_fast_accum=True, out=out)
        return lambda: torch._scaled_mm(A, W.t(), sa, sb, out_dtype=OUT, use_fast_accum=True)
    backend = how[1]
    if out is not None:
        op_out = torch.ops.fp8gemm.gemm_fp8_out.default
        return lambda: op_out(A, W.t(), sa, sb, OUT, out, backend)
    op = torch.ops.fp8gemm.gemm_fp8.default
    return lambda: op(A, W.t(), sa, sb, OUT, backend)


def step_calls(inputs: StepInputs, A: Dict[int, torch.Tensor], plan: Plan, names: Optional[Iterable[str]] = None,
               preallocated_out: bool = False) -> List[Callable[[], object]]:
    shapes = {s.name: s for s in inputs.model.linears}
    calls = []
    for name, copy in inputs.order(names):
        s = shapes[name]
        out = torch.empty(A[s.k].shape[0], s.n, dtype=OUT, device="cuda") if preallocated_out else None
        calls.append(gemm_call(inputs, A[s.k], name, copy, plan[name], out))
    return calls


def plans(model: StepModel, m: int, defaults: Dict[Tuple[int, int, int], str]) -> Dict[str, Plan]:
    return {
        "torch": {s.name: ("torch",) for s in model.linears},
        "untuned": {s.name: ("fp8gemm", defaults[(m, s.n, s.k)]) for s in model.linears},
        "tuned": {s.name: ("fp8gemm", "auto") for s in model.linears},
    }


def untuned_defaults(models: Sequence[StepModel], ms: Sequence[int]) -> Dict[Tuple[int, int, int], str]:
    """The tactic "auto" runs at each (M, N, K) with no tuned entry. The first call loads any
    cache the library loads by itself, so that clear_cache forgets it too."""
    keys = sorted({(m, s.n, s.k) for model in models for s in model.linears for m in ms})
    fp8gemm.choose(*keys[0])
    fp8gemm.clear_cache()
    return {key: fp8gemm.choose(*key) for key in keys}


def tune_all(models: Sequence[StepModel], ms: Sequence[int], key_budget_ms: float, cache: Optional[str],
             layer: str = "") -> list:
    """fp8gemm.tune of every (M bucket, N, K) the models run: the GEMM's keys, or with `layer` the
    linear layer's (fp8gemm.tune's layer)."""
    keys = sorted({(m, s.n, s.k) for model in models for s in model.linears for m in ms})
    return fp8gemm.tune(keys, key_budget_ms=key_budget_ms, cache=cache, layer=layer)


def bench_model(model: StepModel, ms: Sequence[int], defaults, replays: int, log=print) -> List[dict]:
    """One row per M: each contender's median step time, the ratios torch / contender (> 1:
    fp8gemm is faster), the point's noise and the tactics tuned auto runs."""
    inputs = StepInputs(model)
    rows = []
    for m in ms:
        A = inputs.activations(m)
        graphs = {name: capture(step_calls(inputs, A, plan)) for name, plan in plans(model, m, defaults).items()}
        graphs = {"torch": graphs["torch"], "untuned": graphs["untuned"], "tuned": graphs["tuned"],
                  "torch_again": graphs["torch"]}
        t = time_round_robin(graphs, replays)
        row = dict(model=model.label, M=m, gemms=model.gemms, torch_us=t["torch"], untuned_us=t["untuned"],
                   tuned_us=t["tuned"], x_untuned=t["torch"] / t["untuned"], x_tuned=t["torch"] / t["tuned"],
                   noise=abs(t["torch"] / t["torch_again"] - 1.0),
                   tuned_tactics=";".join(f"{s.name}={fp8gemm.choose(m, s.n, s.k)}" for s in model.linears))
        rows.append(row)
        log(f"{model.label:24} {m:6} {row['gemms']:5} {row['torch_us']:10.1f} {row['untuned_us']:10.1f} "
            f"{row['tuned_us']:10.1f} {row['x_untuned']:9.3f} {row['x_tuned']:8.3f} {100 * row['noise']:6.2f}%")
        del graphs, A
    del inputs
    torch.cuda.empty_cache()
    return rows


HEADER = (f"{'model':24} {'M':>6} {'GEMMs':>5} {'torch us':>10} {'untuned':>10} {'tuned':>10} "
          f"{'x untuned':>9} {'x tuned':>8} {'noise':>7}")


def slower_than_torch(rows: Sequence[dict], min_gap: float = 0.01) -> List[dict]:
    """Points where tuned fp8gemm is slower than torch._scaled_mm by more than the noise (at
    least min_gap): the issue's rule is that there are none."""
    return [r for r in rows if r["x_tuned"] < 1.0 - max(min_gap, 2 * r["noise"])]
