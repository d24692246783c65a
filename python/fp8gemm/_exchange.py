"""Every rank's payload to every rank of a torch.distributed group, within a deadline, naming the
ranks that did not answer: a plain collective past its timeout fails without saying who is missing
(or, on NCCL, aborts the process), and a group tune must neither wait forever nor leave the
reader guessing.

Each exchange is point-to-point over gloo (byte tensors on the CPU): every rank posts a send to
and a receive from every other rank, first the sizes, then the bytes, and waits for the receives
until the deadline. A group whose backend is not gloo (NCCL) gets a gloo group with the same
ranks, made once (what vLLM's cpu_group is), so the payloads never need CUDA tensors.
"""

from __future__ import annotations

import datetime
import time
from typing import Dict, List, Optional

import torch
import torch.distributed as dist

__all__ = ["GroupError", "GroupTimeoutError", "Exchange"]

# Message tags of fp8gemm's exchanges, above those a program is likely to use on the same group.
_TAG_BASE = 0x46503800
_tags: Dict[int, list] = {}  # id(gloo group) -> [group, next tag]: every rank exchanges in the same order
_side_groups: Dict[tuple, object] = {}  # ranks -> a gloo group for a group whose backend is not gloo


class GroupError(RuntimeError):
    """A group tune stopped on every rank for a reason one rank reported (its error, a different
    GPU setup, different arguments). `ranks`: the group ranks it names."""

    def __init__(self, message: str, ranks: List[int]):
        super().__init__(message)
        self.ranks = list(ranks)


class GroupTimeoutError(GroupError, TimeoutError):
    """Raised on a rank that waited past the timeout for others: `ranks` did not answer at `step`."""

    def __init__(self, message: str, ranks: List[int], step: str):
        super().__init__(message, ranks)
        self.step = step


def _coordination_group(group, timeout_s: float):
    if "gloo" in str(dist.get_backend(group)):
        return group
    ranks = tuple(dist.get_process_group_ranks(group))
    if ranks not in _side_groups:
        # Only the members call this (use_local_synchronization), as only they run the tune. Its
        # wait for the others is torch's, bounded by the timeout but naming no rank.
        _side_groups[ranks] = dist.new_group(list(ranks), backend="gloo", use_local_synchronization=True,
                                             timeout=datetime.timedelta(seconds=timeout_s))
    return _side_groups[ranks]


class Exchange:
    """all_gather of bytes over `group` where each step waits at most `timeout_s` for the others.
    `what` ("fp8gemm.tune") starts every message."""

    def __init__(self, group, timeout_s: float, what: str):
        self.group = _coordination_group(group, timeout_s)
        self.rank = dist.get_rank(self.group)
        self.size = dist.get_world_size(self.group)
        self.global_ranks = dist.get_process_group_ranks(self.group)
        self.timeout_s = float(timeout_s)
        self.what = what

    def name(self, rank: int) -> str:
        """'rank 2', with its global rank where that differs."""
        g = self.global_ranks[rank]
        return f"rank {rank}" + ("" if g == rank else f" (global rank {g})")

    def _next_tag(self) -> int:
        slot = _tags.setdefault(id(self.group), [self.group, _TAG_BASE])
        tag = slot[1]
        slot[1] += 2
        return tag

    def all_gather(self, step: str, payload: bytes) -> List[bytes]:
        """Every rank's `payload`, in group rank order. Raises GroupTimeoutError naming the ranks
        whose payload did not come within the timeout (counted from this rank's call)."""
        if not payload:
            raise ValueError("an exchange payload is never empty")
        tag = self._next_tag()
        deadline = time.monotonic() + self.timeout_s
        peers = [r for r in range(self.size) if r != self.rank]
        sizes = {r: torch.zeros(1, dtype=torch.int64) for r in peers}
        size = torch.tensor([len(payload)], dtype=torch.int64)
        self._round(step, tag, {r: size for r in peers}, sizes, deadline)
        data = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        received = {r: torch.empty(int(sizes[r].item()), dtype=torch.uint8) for r in peers}
        # The sizes came, so every rank is here: the bytes get a fresh timeout of their own.
        self._round(step, tag + 1, {r: data for r in peers}, received, time.monotonic() + self.timeout_s)
        out = [b""] * self.size
        out[self.rank] = payload
        for r in peers:
            out[r] = received[r].numpy().tobytes()
        return out

    def _round(self, step: str, tag: int, sends: Dict[int, torch.Tensor], recvs: Dict[int, torch.Tensor],
               deadline: float) -> None:
        send_work = {r: dist.isend(t, dst=self.global_ranks[r], group=self.group, tag=tag) for r, t in sends.items()}
        recv_work = {r: dist.irecv(t, src=self.global_ranks[r], group=self.group, tag=tag) for r, t in recvs.items()}
        silent: Dict[int, Optional[str]] = {}
        for r, work in recv_work.items():
            why = _wait(work, deadline)
            if why is not None:
                silent[r] = why
        for r, work in send_work.items():
            if r not in silent:
                why = _wait(work, deadline)
                if why is not None:
                    silent[r] = why
        if silent:
            raise self._timeout(step, silent)

    def _timeout(self, step: str, silent: Dict[int, Optional[str]]) -> GroupTimeoutError:
        ranks = sorted(silent)
        names = ", ".join(self.name(r) for r in ranks)
        closed = [r for r in ranks if silent[r] and "closed" in silent[r].lower()]
        cause = f" ({', '.join(self.name(r) for r in closed)}: connection closed)" if closed else ""
        return GroupTimeoutError(
            f"{self.what}(group=...): {names} of the group's {self.size} ranks did not answer within "
            f"{self.timeout_s:g} s at step '{step}'{cause}; this is {self.name(self.rank)}. A rank that does not "
            f"answer did not make the same call, or stopped; fp8gemm cannot use this group for its "
            f"exchanges after a timeout", ranks, step)


def _wait(work, deadline: float) -> Optional[str]:
    """None when `work` completes by `deadline`, else why not (gloo's message)."""
    remaining = max(deadline - time.monotonic(), 0.001)
    try:
        work.wait(timeout=datetime.timedelta(seconds=remaining))
        return None
    except RuntimeError as e:
        return str(e)
