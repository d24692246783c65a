"""CUDA-graph timing shared by the step benchmarks: capture a list of calls into one graph,
replay several graphs round-robin and take medians (docs/design.md "Measuring")."""

from __future__ import annotations

import statistics
from typing import Callable, Dict, Sequence

import torch


def capture(calls: Sequence[Callable[[], object]]) -> torch.cuda.CUDAGraph:
    """One graph replaying `calls` in order, after one warm-up pass on a side stream (as torch's
    graph docs advise: first calls may allocate, load modules or pick algorithms)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for call in calls:
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for call in calls:
            call()
    return graph


def time_round_robin(graphs: Dict[str, torch.cuda.CUDAGraph], replays: int, warmup: int = 2) -> Dict[str, float]:
    """Median replay time in us of each graph, replayed A B C A B C ... (`warmup` rounds first)."""
    times = {name: [] for name in graphs}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(warmup + replays):
        for name, graph in graphs.items():
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            if r >= warmup:
                times[name].append(start.elapsed_time(end) * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def noise(graphs: Dict[str, torch.cuda.CUDAGraph], replays: int) -> float:
    """Relative spread of repeated medians of the first graph (two back-to-back measurements):
    differences below it are not findings."""
    name = next(iter(graphs))
    a = time_round_robin({name: graphs[name]}, replays)[name]
    b = time_round_robin({name: graphs[name]}, replays)[name]
    return abs(a / b - 1.0)
