"""Tensor-parallel tuning: the same cache entries on every rank of a torch.distributed group.

Ranks of a TP group run the same GEMM shapes; ranks that pick different tactics from their own
noisy timings do different work. fp8gemm.tune / tune_model / autotune(group=...) make every rank
end with byte-identical entries for the keys of the call (docs/torch.md "Tensor-parallel tuning",
docs/decisions/tp_tuning.md):

  request  every rank sends its GPU setup (the cache validators), its call's arguments and its
           keys; a rank's error, another setup or other arguments stop every rank with the reason.
  tune     the union of the keys is split: merge (the default) gives each rank a contiguous run of
           about equal estimated cost, broadcast gives rank 0 every key; each rank tunes its share.
  shares   every rank sends the entries of its share (export_entries: the cache file's text with
           its validators), the keys it failed and its decisions; each rank imports the others',
           replacing its own entries for those keys, and forgets a key whose tuner kept no entry
           (failed, or budget spent), so that `auto` answers it from the default everywhere.
  agree    every rank sends the keys it could not import (a tactic that does not run there); every
           rank forgets them, so no rank keeps an entry another lacks.
  saved    with a cache path every rank saves (the same path on one host: the file lock
           serializes the writers, and the file holds the same entries whoever writes last);
           one rank's failed save stops every rank with its reason.

Each step waits at most `timeout` seconds for the others and then raises GroupTimeoutError naming
the ranks that did not answer (_exchange.py). The payloads travel over gloo point-to-point (a
gloo group with the same ranks is made once for an NCCL group).
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from typing import Dict, Iterator, List, Optional

import torch
import torch.distributed as dist

from . import _group_plan
from ._exchange import Exchange, GroupError, GroupTimeoutError

__all__ = ["STRATEGIES", "DEFAULT_TIMEOUT_S", "GroupError", "GroupTimeoutError", "export_entries", "import_entries"]

STRATEGIES = ("merge", "broadcast")
# torch.distributed's own default: a step after tuning waits for the slowest rank's share (with
# broadcast, for rank 0's whole tune), which takes minutes for a whole model.
DEFAULT_TIMEOUT_S = 1800.0

_ops = torch.ops.fp8gemm


def export_entries(keys: Optional[List[str]] = None) -> str:
    """The tuned entries of `keys` (decision["key"] strings; None: every entry) on the current GPU
    as text (the cache file's JSON, validators included), for a transport of your choosing."""
    if keys is None:
        return _ops.export_all_entries.default()
    return _ops.export_entries.default([str(k) for k in keys])


def import_entries(data: str, replace: bool = False) -> dict:
    """Adds the entries of `data` (export_entries of another process) on the current GPU, each whole
    or not at all. Raises ValueError when `data` was made on another setup (the validators) or is
    not an fp8gemm cache text. A key held here with a different entry keeps it unless `replace`.
    Returns {"added", "replaced", "unchanged", "kept_local": [keys], "refused": ["key: why"]}."""
    return json.loads(_ops.import_entries.default(str(data), bool(replace)))


class _OpsCache:
    """This rank's tuned cache through the ops (needs its GPU). The CPU tests replace it
    (`_make_local`) with a fake that tunes without a GPU."""

    def setup(self) -> dict:
        return json.loads(_ops.export_entries.default([]))["validators"]

    def tune(self, jobs: List[list], call: "TuneCall") -> List[dict]:
        flat = [int(v) for job in jobs for v in job]
        text = _ops.tune.default(flat, call.a_dtype, call.b_dtype, call.dtype, call.key_budget_ms, call.run_budget_ms,
                                 list(call.backends), call.retune, call.layer)
        return json.loads(text)["decisions"]

    def failures(self) -> Dict[str, str]:
        return json.loads(_ops.tuning_failures.default())

    def export(self, keys: List[str]) -> str:
        return _ops.export_entries.default(list(keys))

    def import_(self, text: str, replace: bool) -> dict:
        return import_entries(text, replace)

    def forget(self, keys: List[str]) -> int:
        return _ops.forget_entries.default(list(keys)) if keys else 0

    def keys(self) -> List[str]:
        return [e["key"] for e in json.loads(_ops.export_all_entries.default())["entries"]]

    def merge(self, path: str) -> None:
        _ops.merge_cache.default(path)

    def save(self, path: str) -> None:
        _ops.save_cache.default(path)

    def scope_begin(self, enabled: bool) -> int:
        return _ops.autotune_begin.default(enabled, "")

    def scope_end(self, handle: int) -> None:
        _ops.autotune_end.default(handle)


_make_local = _OpsCache


class TuneCall:
    """fp8gemm.tune's arguments other than the shapes: every rank of a group must pass the same."""

    def __init__(self, a_dtype, b_dtype, dtype, key_budget_ms, run_budget_ms, backends, retune, strategy,
                 layer: str = ""):
        self.a_dtype, self.b_dtype, self.dtype = a_dtype, b_dtype, dtype
        self.key_budget_ms, self.run_budget_ms = float(key_budget_ms), float(run_budget_ms)
        self.backends, self.retune, self.strategy = list(backends or []), bool(retune), strategy
        self.layer = str(layer)

    def wire(self) -> dict:
        return {"a_dtype": str(self.a_dtype), "b_dtype": str(self.b_dtype), "dtype": str(self.dtype),
                "key_budget_ms": self.key_budget_ms, "run_budget_ms": self.run_budget_ms,
                "backends": self.backends, "retune": self.retune, "strategy": self.strategy, "layer": self.layer}


def group_of(group, strategy, timeout, what: str):
    """(group, strategy, timeout in s) for the group protocol, or None when tuning stays local (no
    group, or a group of one rank). Refuses a bad argument with a ValueError / TypeError naming it."""
    if strategy is not None and strategy not in STRATEGIES:
        raise ValueError(f"{what}: strategy must be 'merge' or 'broadcast' (None: merge), got {strategy!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise ValueError(f"{what}: timeout must be a finite number of seconds > 0, got {timeout!r}")
    if group is None:
        return None
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"{what}: group needs torch.distributed initialized (init_process_group) first")
    if not isinstance(group, dist.ProcessGroup):
        raise TypeError(f"{what}: group must be a torch.distributed ProcessGroup (dist.group.WORLD, "
                        f"dist.new_group(...)), got {type(group).__name__}")
    if dist.get_rank(group) < 0:
        raise ValueError(f"{what}: this process (global rank {dist.get_rank()}) is not a member of group")
    if dist.get_world_size(group) == 1:
        return None
    return group, strategy or "merge", float(timeout)


def _gather(ex: Exchange, step: str, payload: dict) -> List[dict]:
    return [json.loads(b) for b in ex.all_gather(step, json.dumps(payload, sort_keys=True).encode())]


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _stop_on_errors(ex: Exchange, gathered: List[dict], own: Optional[BaseException], doing: str) -> None:
    """Every rank stops when any rank reported an error: that rank with its own exception, the
    others with a GroupError naming it."""
    bad = [r for r, p in enumerate(gathered) if p.get("error")]
    if not bad:
        return
    if own is not None:
        raise own
    raise GroupError(f"{ex.what}(group=...): " + "; ".join(f"{ex.name(r)} {doing}: {gathered[r]['error']}"
                                                          for r in bad), bad)


def _require_same(ex: Exchange, gathered: List[dict], field: str, rule: str) -> None:
    first = gathered[0][field]
    for r, p in enumerate(gathered[1:], start=1):
        if p[field] != first:
            diff = next((f"{name} is {p[field].get(name)!r} there and {first.get(name)!r} on {ex.name(0)}"
                         for name in sorted(set(first) | set(p[field])) if p[field].get(name) != first.get(name)), "")
            raise GroupError(f"{ex.what}(group=...): {ex.name(r)} differs: {diff}; {rule}", [0, r])


def _present(text: Optional[str]) -> List[str]:
    return [e["key"] for e in json.loads(text)["entries"]] if text else []


def _adopt(ex: Exchange, local, owners: Dict[str, int], shares: List[dict], cache: Optional[str]) -> Dict[str, str]:
    """Steps shares (import), agree and saved; returns {key: why} of the keys every rank forgot
    because a rank could not use their entries."""
    refused: Dict[str, str] = {}
    for r, share in enumerate(shares):
        if r == ex.rank or not share["present"]:
            continue
        report = local.import_(share["entries"], True)
        taken = set(report["added"]) | set(report["replaced"]) | set(report["unchanged"])
        for key in share["present"]:
            if key not in taken:
                why = "; ".join(report["refused"])
                refused[key] = f"{ex.name(ex.rank)} cannot use the entry of {ex.name(r)}: {why}"
    present = {key for share in shares for key in share["present"]}
    local.forget([key for key in owners if key not in present])
    agreed = _gather(ex, "agree", {"refused": refused})
    forgotten = {key: why for p in agreed for key, why in p["refused"].items()}
    local.forget(sorted(forgotten))
    if cache:
        error = None
        try:
            local.save(cache)
        except Exception as e:  # noqa: BLE001 - every rank learns of it below
            error = e
        _stop_on_errors(ex, _gather(ex, "saved", {"error": _error_text(error) if error else None}), error,
                        f"could not save {cache}")
    return forgotten


def _warn(what: str, fallback: Dict[str, str], kept: Dict[str, str]) -> None:
    """One warning on every rank for the keys that keep the default everywhere, one for the keys
    whose retune failed and that keep their earlier entry everywhere."""
    for keys, outcome in ((fallback, "keep the default"), (kept, "keep the entry they had")):
        lines = [f"{key}: {why}" for key, why in sorted(keys.items())]
        if lines:
            shown = "; ".join(lines[:3]) + (f"; and {len(lines) - 3} more" if len(lines) > 3 else "")
            warnings.warn(f"{what}(group=...): {len(lines)} key(s) {outcome} on every rank: {shown}",
                          RuntimeWarning, stacklevel=4)


def tune_in_group(group, strategy: str, timeout_s: float, problems: List[int], call: TuneCall,
                  cache: Optional[str]) -> List[dict]:
    """fp8gemm.tune with a group of more than one rank (see the module's docstring). Returns this
    rank's decisions, one per problem ([batch, m, n, k] flattened), each with "tuned_on_rank"."""
    local = _make_local()
    ex = Exchange(group, timeout_s, "fp8gemm.tune")
    own, request, my_keys = None, {"error": None}, []
    try:
        my_keys = _ops.tune_keys.default(problems, call.a_dtype, call.b_dtype, call.dtype, call.key_budget_ms,
                                         call.run_budget_ms, call.backends, call.layer)
        jobs = {key: [problems[4 * i], _ops.m_bucket.default(problems[4 * i + 1])] + problems[4 * i + 2:4 * i + 4]
                for i, key in enumerate(my_keys)}
        if cache:
            local.merge(cache)
        request.update(setup=local.setup(), call=dict(call.wire(), cache_file=bool(cache)), jobs=jobs)
    except Exception as e:  # noqa: BLE001 - every rank learns of it below
        own, request = e, {"error": _error_text(e)}
    requests = _gather(ex, "request", request)
    _stop_on_errors(ex, requests, own, "cannot tune")
    _require_same(ex, requests, "setup", "a group tune needs the same GPU and software on every rank")
    _require_same(ex, requests, "call", "every rank must call fp8gemm.tune with the same arguments (shapes "
                                        "aside), and all with a cache file or none")

    jobs = {key: tuple(job) for p in requests for key, job in p["jobs"].items()}
    by_job = {job: key for key, job in jobs.items()}
    owners = {by_job[job]: r for job, r in _group_plan.owners_for(list(by_job), ex.size, strategy,
                                                                  call.key_budget_ms).items()}
    mine = sorted(key for key in owners if owners[key] == ex.rank)
    share = {"entries": None, "present": [], "failed": {}, "decisions": {}}
    if mine:
        try:
            decisions = local.tune([list(jobs[key]) for key in mine], call)
            share["decisions"] = {d["key"]: d for d in decisions}
            failures = local.failures()
            share["failed"] = {key: failures[key] for key in mine
                               if key in failures and not share["decisions"].get(key, {}).get("measured")}
            share["entries"] = local.export(mine)
            share["present"] = _present(share["entries"])
        except Exception as e:  # noqa: BLE001 - its keys keep the default on every rank
            share.update(entries=None, present=[], decisions={}, failed={key: _error_text(e) for key in mine})
    shares = _gather(ex, "shares", share)
    failed = {key: f"{ex.name(r)} failed to tune it: {why}"
              for r, s in enumerate(shares) for key, why in s["failed"].items()}
    forgotten = _adopt(ex, local, owners, shares, cache)
    present = {key for s in shares for key in s["present"]}
    # A failed retune leaves the entry its owner had: every rank keeps that one.
    fallback = {**{key: why for key, why in failed.items() if key not in present}, **forgotten}
    _warn("fp8gemm.tune", fallback, {key: why for key, why in failed.items() if key not in fallback})

    decided = {key: d for s in shares for key, d in s["decisions"].items()}
    out = []
    for key in my_keys:
        b, m, n, k = jobs[key]
        d = dict(decided.get(key) or {"key": key, "batch": b, "m_bucket": m, "n": n, "k": k, "choice": None,
                                      "measured": False})
        d["tuned_on_rank"] = owners[key]
        if key in fallback:
            d["group_fallback"] = fallback[key]
            d["reason"] = f"kept the default on every rank of the group: {fallback[key]}"
        out.append(d)
    return out


@contextlib.contextmanager
def autotune_in_group(group, strategy: str, timeout_s: float, enabled: bool, cache: Optional[str]) -> Iterator[None]:
    """fp8gemm.autotune with a group: inside, each rank tunes the keys it meets as without a group
    (the ranks run in parallel, so no slower than one alone); at exit the keys any rank tuned in
    the scope get one entry each, every rank's the same (broadcast: the lowest rank that tuned it;
    merge: the ranks that tuned it in turn), through the same steps as tune_in_group."""
    local = _make_local()
    if cache:
        local.merge(cache)
    before = set(local.keys())
    handle = local.scope_begin(enabled)
    error = None
    try:
        yield
    except BaseException as e:
        error = e
        raise
    finally:
        local.scope_end(handle)
        try:
            _sync_scope(group, strategy, timeout_s, local, sorted(set(local.keys()) - before), cache, error)
        except GroupError:
            if error is None:
                raise  # else the body's own exception propagates (the others were told of it)


def _sync_scope(group, strategy, timeout_s, local, new_keys: List[str], cache, error) -> None:
    ex = Exchange(group, timeout_s, "fp8gemm.autotune")
    own, request = None, {"error": _error_text(error) if error is not None else None}
    if error is None:
        try:
            request.update(setup=local.setup(), call={"strategy": strategy, "cache_file": bool(cache)}, keys=new_keys)
        except Exception as e:  # noqa: BLE001 - every rank learns of it below
            own, request = e, {"error": _error_text(e)}
    requests = _gather(ex, "request", request)
    if error is not None:
        return  # the others stop on the error sent; the body's exception propagates here
    _stop_on_errors(ex, requests, own, "left the scope with an error")
    _require_same(ex, requests, "setup", "a group tune needs the same GPU and software on every rank")
    _require_same(ex, requests, "call", "every rank must enter fp8gemm.autotune with the same strategy, and "
                                        "all with a cache file or none")
    holders: Dict[str, List[int]] = {}
    for r, p in enumerate(requests):
        for key in p["keys"]:
            holders.setdefault(key, []).append(r)
    owners = _group_plan.holder_owners(holders, strategy)
    mine = [key for key, r in owners.items() if r == ex.rank]
    text = local.export(mine) if mine else None
    shares = _gather(ex, "shares", {"entries": text, "present": _present(text), "failed": {}, "decisions": {}})
    _warn("fp8gemm.autotune", _adopt(ex, local, owners, shares, cache), {})
