"""The layer benchmark (decode_step.py layer): whole FP8 linear layers, bf16 activations in and
bf16 out, against bf16 F.linear, per decode step at each M.

Every linear of L decoder layers (distinct weight copies per layer) runs in one CUDA graph per
contender (layer_contenders.py: bf16, torch FP8 static/dynamic, fbgemm-gpu-genai where
importable, fp8gemm's linear op static/dynamic and its GEMM alone on pre-quantized activations);
the graphs replay round-robin and each point takes the medians, the bf16 graph twice (the spread
of its two medians is the point's noise). Every FP8 contender reads the same e4m3 weights and
scales; bf16 reads them dequantized. Each linear's input is a bf16 [M, K] tensor (one per K,
random normal); the static scale is its per_tensor_scale, computed once outside the graph.

Before timing, each contender's call runs once eagerly per linear shape: a call that fails there
(an fbgemm kernel that refuses the shape, say) drops the contender at that point with a note, and
its output against bf16's gives the row's rel_err (a wrong scale convention shows as O(1)).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

import fp8gemm
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3, quantize_per_tensor

from .graphs import capture, time_round_robin
from .layer_contenders import Activation, Contender, WeightCopy
from .layers import StepModel

# Outputs further from bf16's than this (relative Frobenius error) are reported as wrong: e4m3
# rounding of both operands gives a few percent.
REL_ERR_LIMIT = 0.15


def _normal(shape, std: float, seed: int) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.empty(shape, dtype=torch.bfloat16, device="cuda").normal_(0, std, generator=g)


def weight_copy(n: int, k: int, seed: int) -> WeightCopy:
    q, scale = quantize_per_tensor(_normal((n, k), 0.02, seed))
    return WeightCopy(q, scale, (q.float() * scale).to(torch.bfloat16))


class LayerInputs:
    """The step's weights (one WeightCopy per linear and decoder layer) and, per M, its inputs."""

    def __init__(self, model: StepModel):
        self.model = model
        self.weights = {s.name: [weight_copy(s.n, s.k, seed=100 * i + c) for c in range(s.copies)]
                        for i, s in enumerate(model.linears)}

    def activations(self, m: int) -> Dict[int, Activation]:
        acts = {}
        for k in sorted({s.k for s in self.model.linears}):
            x = _normal((m, k), 1.0, seed=1000 + k)
            scale = per_tensor_scale(x)
            acts[k] = Activation(x, scale, quantize_e4m3(x, scale))
        return acts

    def order(self) -> List[Tuple[str, int, int]]:
        """(linear, copy, k) in step order: layer by layer, each layer's linears in model order."""
        depth = max(s.copies for s in self.model.linears)
        return [(s.name, i, s.k) for i in range(depth) for s in self.model.linears if i < s.copies]


def step_calls(inputs: LayerInputs, acts: Dict[int, Activation], contender: Contender) -> List[Callable]:
    return [contender.make(inputs.weights[name][copy], acts[k]) for name, copy, k in inputs.order()]


def _rel_err(y: torch.Tensor, ref: torch.Tensor) -> float:
    return ((y.float() - ref.float()).norm() / ref.float().norm().clamp(min=1e-30)).item()


def probe(inputs: LayerInputs, acts: Dict[int, Activation], contenders: Sequence[Contender], m: int,
          note: Callable[[str, str], None]) -> Dict[str, float]:
    """{contender: worst rel_err against bf16 over the linear shapes} for the contenders whose
    first copy of every linear runs eagerly at this M; the others get a note and are left out."""
    refs = {s.name: torch.nn.functional.linear(acts[s.k].x, inputs.weights[s.name][0].bf16)
            for s in inputs.model.linears}
    errs = {}
    for c in contenders:
        if c.max_m is not None and m > c.max_m:
            continue
        try:
            errs[c.name] = max(_rel_err(c.make(inputs.weights[s.name][0], acts[s.k])(), refs[s.name])
                               for s in inputs.model.linears)
            if refs[inputs.model.linears[0].name].is_cuda:  # an asynchronous failure shows here
                torch.cuda.synchronize()
        except Exception as e:  # the op refuses the shape, or is missing: leave it out here
            note(c.name, f"fails at M={m}: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
    return errs


def tactics(model: StepModel, m: int) -> str:
    return ";".join(f"{s.name.rsplit('.', 1)[-1]}={fp8gemm.choose(m, s.n, s.k)}" for s in model.linears)


def bench_point(inputs: LayerInputs, m: int, contenders: Sequence[Contender], replays: int,
                note: Callable[[str, str], None]) -> List[dict]:
    model = inputs.model
    acts = inputs.activations(m)
    errs = probe(inputs, acts, contenders, m, note)
    if "bf16" not in errs:
        raise RuntimeError(f"{model.label} M={m}: the bf16 step does not run")
    graphs = {}
    for c in contenders:
        if c.name in errs:
            try:
                graphs[c.name] = capture(step_calls(inputs, acts, c))
            except RuntimeError as e:
                torch.cuda.synchronize()
                note(c.name, f"cannot be captured at M={m}: {str(e).splitlines()[0][:200]}")
    graphs["bf16_again"] = graphs["bf16"]
    t = time_round_robin(graphs, replays)
    noise = abs(t["bf16"] / t["bf16_again"] - 1.0)
    rows = []
    for c in contenders:
        if c.name not in graphs:
            continue
        if errs[c.name] > REL_ERR_LIMIT:
            note(c.name, f"output differs from bf16's at M={m}: rel_err {errs[c.name]:.3f} (limit {REL_ERR_LIMIT})")
        rows.append(dict(model=model.label, M=m, contender=c.name, mode=c.mode, gemms=model.gemms,
                         us_per_step=t[c.name], x_bf16=t["bf16"] / t[c.name], noise=noise, rel_err=errs[c.name],
                         tactics=tactics(model, m) if c.family == "fp8gemm" else ""))
    del graphs, acts
    return rows


def short(name: str) -> str:
    """A contender's column label, at most 11 characters (torch_fp8_dynamic -> torch_dyn)."""
    return name.replace("_fp8", "").replace("fp8gemm", "fg").replace("_static", "_st").replace("_dynamic", "_dyn")


def header(contenders: Sequence[Contender]) -> str:
    return f"{'model':20} {'M':>5} {'bf16 us':>9} " + " ".join(
        f"{short(c.name):>11}" for c in contenders if c.name != "bf16") + \
        f" {'noise':>6}   (x bf16 = bf16 us / contender us; fg = fp8gemm, st/dyn = static/dynamic)"


def point_line(rows: Sequence[dict], contenders: Sequence[Contender]) -> str:
    by = {r["contender"]: r for r in rows}
    r0 = by["bf16"]
    xs = " ".join(f"{by[c.name]['x_bf16']:11.3f}" if c.name in by else f"{'-':>11}"
                  for c in contenders if c.name != "bf16")
    return f"{r0['model']:20} {r0['M']:5} {r0['us_per_step']:9.1f} {xs} {100 * r0['noise']:5.2f}%"


def bench_model(model: StepModel, ms: Sequence[int], contenders: Sequence[Contender], replays: int,
                log=print, note: Optional[Callable[[str, str], None]] = None) -> List[dict]:
    note = note or (lambda name, text: log(f"# {name}: {text}"))
    inputs = LayerInputs(model)
    rows = []
    for m in ms:
        point = bench_point(inputs, m, contenders, replays, note)
        log(point_line(point, contenders))
        rows += point
    del inputs
    torch.cuda.empty_cache()
    return rows


class Notes:
    """Says each (contender, reason) once, however many points it recurs at (the M in the text
    is the first); counts the rest."""

    def __init__(self, log):
        self.log, self.seen = log, {}

    def __call__(self, name: str, text: str) -> None:
        key = (name, text.split(": ", 1)[-1])
        if key not in self.seen:
            self.log(f"# note: {name} {text}")
        self.seen[key] = self.seen.get(key, 0) + 1


def describe(models: Sequence[StepModel], contenders: Sequence[Contender], ms: Sequence[int], log=print) -> None:
    for model in models:
        log(f"# {model.describe()}")
    for c in contenders:
        log(f"# contender {c.name:18} [{c.mode}] {c.what}")
    log(f"# M {list(ms)}: {len(ms)} points per model, {len(contenders)} graphs per point (+ bf16 again: noise)")


def dry_run(args, models: Sequence[StepModel], contenders: Sequence[Contender], ms: Sequence[int]) -> int:
    """What the run would time, touching no GPU (fbgemm is looked up, not imported)."""
    import importlib.util

    describe(models, contenders, ms)
    if any(c.family == "fbgemm" for c in contenders) and importlib.util.find_spec("fbgemm_gpu") is None:
        print("# note: fbgemm_gpu is not installed here; its contenders will be skipped")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print("# note: matplotlib is not importable here; the plot will be skipped (the CSV is written)")
    print("# dry run: nothing was timed")
    return 0


def usable(contenders: Sequence[Contender], log=print) -> List[Contender]:
    """The contenders this machine can run: fbgemm's only where it imports and has their ops."""
    from .layer_contenders import fbgemm_status, missing_fbgemm_ops

    if not any(c.family == "fbgemm" for c in contenders):
        return list(contenders)
    ok, line = fbgemm_status()
    log(f"# {line}")
    missing = missing_fbgemm_ops(contenders) if ok else {c.name: "not importable" for c in contenders
                                                         if c.family == "fbgemm"}
    for name, why in missing.items():
        log(f"# note: {name} skipped: {why}")
    return [c for c in contenders if c.name not in missing]


def run(args, models: Sequence[StepModel], contenders: Sequence[Contender], ms: Sequence[int]) -> int:
    from . import layer_summary, report
    from .step import tune_all

    log = lambda s: print(s, flush=True)  # noqa: E731
    log(f"# {torch.cuda.get_device_name()}; torch {torch.__version__}; fp8gemm {fp8gemm.__version__}")
    contenders = usable(contenders, log)
    describe(models, contenders, ms, log)
    if args.key_budget_ms > 0:  # the GEMM's keys (the ceiling's), then the layer's in both scale modes
        tuned = sum(len(tune_all(models, ms, args.key_budget_ms, args.cache, layer)) for layer in ("", "static", "dynamic"))
        log(f"# tuned {tuned} keys (GEMM, static and dynamic layer)")
    elif args.cache:
        fp8gemm.merge_cache(args.cache)
        log(f"# not tuned; choices from {args.cache}")
    notes = Notes(log)
    log(header(contenders))
    rows = [r for model in models for r in bench_model(model, ms, contenders, args.replays, log, notes)]
    for (name, reason), count in notes.seen.items():
        if count > 1:
            log(f"# note: {name} {reason} ({count} times)")
    for line in layer_summary.summary_lines(rows):
        log(line)
    if args.csv:
        report.write_csv(args.csv, rows)
        log(f"# csv: {args.csv}")
    if args.plot:
        report.plot_or_say(layer_summary.plot, args.plot, rows, args.csv, log)
    return 0
