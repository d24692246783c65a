"""What costs between the kernels of a decode step: the step of tuned fp8gemm against
torch._scaled_mm's at chosen M values, taken apart. Each experiment is one more graph in the
same round-robin, so every number below is comparable with the step times:

  alone     each linear's GEMMs (all its copies) in a graph of their own: the kernels' own time;
            step - sum(alone) is what the step adds between kernels (launch gaps, tails, overlap)
  swap      the tuned step with one linear on torch._scaled_mm, and the torch step with one
            linear on tuned fp8gemm: which linear's kernels interact with their neighbours
  no_pdl    the tuned step with every PDL tactic replaced by its twin without PDL
            (small_m pdl=0, CUTLASS without _pdl): the cost or gain of early launch
  out       both steps writing preallocated outputs (the out= ops): allocation and workspace
            placement in the graph's memory pool
  profile   the kernels one replay runs (torch.profiler): count, GPU-busy time, and the rest of
            the step time, which is idle GPU between kernels; extra kernels (memsets, split-K
            reductions) show here
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

import torch

import fp8gemm

from .graphs import capture, time_round_robin
from .layers import StepModel
from .step import StepInputs, step_calls

_SMALL_M_PDL = re.compile(r",pdl=[12]")
_SMALL_M_EARLY = re.compile(r",early=\d+")


def without_pdl(tactic: str) -> Optional[str]:
    """The tactic's twin launched without programmatic dependent launch, or None when it has no
    PDL (or no twin). small_m: pdl=0 (early= only exists with PDL); CUTLASS: the name without
    _pdl."""
    if tactic.startswith("small_m:") and _SMALL_M_PDL.search(tactic):
        return _SMALL_M_EARLY.sub("", _SMALL_M_PDL.sub(",pdl=0", tactic))
    if tactic.startswith("cutlass:") and tactic.endswith("_pdl"):
        return tactic[: -len("_pdl")]
    return None


def _runnable(tactic: str, m: int, n: int, k: int) -> bool:
    try:
        fp8gemm.choose(m, n, k, backend=tactic)
        return True
    except (RuntimeError, ValueError):
        return False


def profile_kernels(graph: torch.cuda.CUDAGraph, replays: int = 3) -> Dict[str, object]:
    """Kernels per replay, their GPU time per replay (us) and the busiest ones, from
    torch.profiler's CUDA activity (CUPTI records the kernels of graph replays)."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            graph.replay()
        torch.cuda.synchronize()
    kernels = []
    for e in prof.key_averages():
        device_us = getattr(e, "self_device_time_total", None)
        if device_us is None:
            device_us = getattr(e, "self_cuda_time_total", 0)
        if device_us > 0 and not e.key.startswith("cuda"):  # runtime API rows are host-side
            kernels.append((e.key, e.count / replays, device_us / replays))
    kernels.sort(key=lambda r: -r[2])
    return {"kernels": sum(c for _, c, _ in kernels), "busy_us": sum(t for _, _, t in kernels), "top": kernels[:6]}


def isolate_point(model: StepModel, inputs: StepInputs, m: int, replays: int, log=print) -> List[dict]:
    A = inputs.activations(m)
    names = [s.name for s in model.linears]
    shapes = {s.name: s for s in model.linears}
    torch_plan = {n: ("torch",) for n in names}
    tuned_plan = {n: ("fp8gemm", "auto") for n in names}
    graphs = {"step/torch": capture(step_calls(inputs, A, torch_plan)),
              "step/tuned": capture(step_calls(inputs, A, tuned_plan))}
    graphs["step/torch_again"] = graphs["step/torch"]
    for n in names:
        graphs[f"alone/{n}/torch"] = capture(step_calls(inputs, A, torch_plan, names=[n]))
        graphs[f"alone/{n}/tuned"] = capture(step_calls(inputs, A, tuned_plan, names=[n]))
        graphs[f"swap/{n}->torch"] = capture(step_calls(inputs, A, dict(tuned_plan, **{n: ("torch",)})))
        graphs[f"swap/{n}->tuned"] = capture(step_calls(inputs, A, dict(torch_plan, **{n: ("fp8gemm", "auto")})))
    no_pdl, changed = {}, []
    for n in names:
        tactic = fp8gemm.choose(m, shapes[n].n, shapes[n].k)
        twin = without_pdl(tactic)
        if twin and _runnable(twin, m, shapes[n].n, shapes[n].k):
            no_pdl[n] = ("fp8gemm", twin)
            changed.append(f"{n}: {tactic} -> {twin}")
        else:
            no_pdl[n] = ("fp8gemm", tactic)
    if changed:
        graphs["no_pdl/tuned"] = capture(step_calls(inputs, A, no_pdl))
    graphs["out/torch"] = capture(step_calls(inputs, A, torch_plan, preallocated_out=True))
    graphs["out/tuned"] = capture(step_calls(inputs, A, tuned_plan, preallocated_out=True))
    t = time_round_robin(graphs, replays)
    prof = {c: profile_kernels(graphs[f"step/{c}"]) for c in ("torch", "tuned")}
    del graphs
    report(model, m, t, prof, names, changed, log)
    return [dict(model=model.label, M=m, experiment=name, us=us) for name, us in t.items()] + [
        dict(model=model.label, M=m, experiment=f"profile/{c}/{key}", us=p[key])
        for c, p in prof.items() for key in ("kernels", "busy_us")]


def report(model: StepModel, m: int, t: Dict[str, float], prof, names: Sequence[str], changed, log) -> None:
    ts, tt = t["step/torch"], t["step/tuned"]
    log(f"\n== isolate {model.label} M={m}: tuned fp8gemm against torch._scaled_mm, {model.gemms} GEMMs per step")
    log(f"step          torch {ts:9.1f} us   tuned {tt:9.1f} us   x {ts / tt:.3f}   "
        f"(noise {100 * abs(ts / t['step/torch_again'] - 1):.2f}%)")
    sums = {c: sum(t[f"alone/{n}/{c}"] for n in names) for c in ("torch", "tuned")}
    for n in names:
        a, b = t[f"alone/{n}/torch"], t[f"alone/{n}/tuned"]
        log(f"alone {n:16} torch {a:9.1f} us   tuned {b:9.1f} us   x {a / b:.3f}")
    log(f"sum of alone  torch {sums['torch']:9.1f} us   tuned {sums['tuned']:9.1f} us   "
        f"x {sums['torch'] / sums['tuned']:.3f}")
    log(f"between kernels (step - sum of alone): torch {ts - sums['torch']:+.1f} us, tuned {tt - sums['tuned']:+.1f} us")
    for n in names:
        log(f"swap {n:16} tuned step with it on torch: x {ts / t[f'swap/{n}->torch']:.3f}   "
            f"torch step with it on tuned: x {ts / t[f'swap/{n}->tuned']:.3f}")
    if changed:
        log(f"no PDL        tuned {t['no_pdl/tuned']:9.1f} us   x {ts / t['no_pdl/tuned']:.3f}   ({'; '.join(changed)})")
    else:
        log("no PDL        (no tuned tactic of this step uses PDL)")
    log(f"out= buffers  torch {t['out/torch']:9.1f} us   tuned {t['out/tuned']:9.1f} us   "
        f"x {t['out/torch'] / t['out/tuned']:.3f}")
    for c, p in prof.items():
        if not p["kernels"]:
            log(f"profile {c}: the profiler saw no kernels in the graph replays (no CUPTI activity)")
            continue
        step_us = t[f"step/{c}"]
        log(f"profile {c:6} {p['kernels']:.0f} kernels/step, GPU busy {p['busy_us']:.1f} us, idle between "
            f"kernels {step_us - p['busy_us']:+.1f} us of {step_us:.1f}")
        for name, count, us in p["top"]:
            log(f"    {us:9.1f} us  {count:5.0f} x  {name[:110]}")


def isolate(model: StepModel, ms: Sequence[int], replays: int, log=print) -> List[dict]:
    inputs = StepInputs(model)
    rows = []
    for m in ms:
        rows += isolate_point(model, inputs, m, replays, log)
    del inputs
    torch.cuda.empty_cache()
    return rows
