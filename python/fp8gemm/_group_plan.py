"""Which rank of a group tunes which key: the same answer on every rank from the same inputs.

merge: the keys sorted by shape (batch, N, K), then M bucket, cut into one contiguous run per rank
of about equal estimated cost, so that a shape's buckets stay on one rank (the tuner tries a
bucket's neighbour's best first) except at the cuts. broadcast: rank 0 tunes every key.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

# A key as the plan sees it: (batch, m_bucket, n, k).
Job = Tuple[int, int, int, int]


def estimated_cost_ms(job: Job, key_budget_ms: float) -> float:
    """What tuning one key takes, roughly: its budget, or for heavy calls the fixed minimum of about
    60 calls (the default twice and a challenger, 5 replays each, and the samples), a call costed as
    the tuner plans it (3 TB/s, 1000 TFLOP/s, + 4 us)."""
    batch, m, n, k = job
    bytes_moved = batch * (n * k + m * k + 2 * m * n)
    call_us = max(bytes_moved / 3e6, 2.0 * batch * m * n * k / 1e9) + 4.0
    return max(float(key_budget_ms), 60 * call_us / 1e3)


def _shape_order(job: Job):
    batch, m, n, k = job
    return (batch, n, k, m)


def split(jobs: Sequence[Job], ranks: int, key_budget_ms: float) -> Dict[Job, int]:
    """merge's owners: `jobs` (distinct) in shape order, rank r taking the run whose cost midpoints
    fall in [r, r + 1) x total / ranks."""
    ordered = sorted(jobs, key=_shape_order)
    costs = [estimated_cost_ms(j, key_budget_ms) for j in ordered]
    total = sum(costs) or 1.0
    owners, done = {}, 0.0
    for job, cost in zip(ordered, costs):
        owners[job] = min(int((done + cost / 2) * ranks / total), ranks - 1)
        done += cost
    return owners


def owners_for(jobs: Sequence[Job], ranks: int, strategy: str, key_budget_ms: float) -> Dict[Job, int]:
    if strategy == "broadcast":
        return {j: 0 for j in jobs}
    return split(jobs, ranks, key_budget_ms)


def holder_owners(holders: Dict[str, List[int]], strategy: str) -> Dict[str, int]:
    """For keys every rank already measured (the autotune scope): whose entry every rank takes.
    broadcast: the lowest rank holding it (rank 0 when it does); merge: the holders in turn over the
    sorted keys, so that no one rank's measurements decide every key."""
    owners = {}
    for i, key in enumerate(sorted(holders)):
        ranks = sorted(holders[key])
        owners[key] = ranks[0] if strategy == "broadcast" else ranks[i % len(ranks)]
    return owners
