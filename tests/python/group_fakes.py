"""A tensor-parallel group on the CPU for the group-tuning tests: ranks as forked processes on
gloo, and a fake tuned cache in each (fp8gemm.distributed._make_local) that tunes without a GPU,
deterministically per key but with a rank's own "noise", as real timings differ between ranks."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import os
import queue
import socket
import time
import warnings
import zlib

import torch
import torch.distributed as dist

from fp8gemm import distributed

VALIDATORS = {"format_version": 1, "library_version": "0.1.0", "gpu_name": "NVIDIA H200", "sm_count": 132,
              "compute_capability": 90, "driver_version": 13000, "cuda_runtime_version": 13000,
              "cublaslt_version": 130100}
TACTICS = ["cublaslt:algo=66", "cutlass:sm90_pingpong_64x16x256", "small_m:wgmma,rows=47"]


class FakeCache:
    """One rank's tuned cache (the interface of distributed._OpsCache). tune() picks, per key, a
    tactic that depends on the key and on the rank, so that ranks tuning alone would disagree.
    fail: keys whose measurement fails (kept unmeasured, reported by failures()); raise_on: keys
    that make the whole tune raise; refuse: tactics import_ refuses (not runnable on this rank);
    tune_sleep_s: a slow rank."""

    def __init__(self, rank, fail=(), raise_on=(), refuse=(), validators=None, tune_sleep_s=0.0, entries=None):
        self.rank = rank
        self.fail, self.raise_on, self.refuse = set(fail), set(raise_on), set(refuse)
        self.validators = dict(validators or VALIDATORS)
        self.tune_sleep_s = tune_sleep_s
        self.entries = dict(entries or {})
        self.tuned, self.failed, self.saved = [], {}, []

    def setup(self):
        return dict(self.validators)

    def entry(self, key, job, lazy=False):
        h = zlib.crc32(key.encode())
        return {"key": key, "batch": job[0], "m_bucket": job[1], "n": job[2], "k": job[3],
                "tactic": TACTICS[(h + self.rank) % len(TACTICS)], "us": (h % 1000) / 10 + self.rank / 100,
                "default": TACTICS[0], "default_us": (h % 1000) / 10 + 1, "lazy": lazy}

    def tune(self, jobs, call):
        time.sleep(self.tune_sleep_s)
        decisions = []
        for job in jobs:
            key = torch.ops.fp8gemm.tune_keys.default(list(job), call.a_dtype, call.b_dtype, call.dtype,
                                                      call.key_budget_ms, call.run_budget_ms, call.backends)[0]
            if key in self.raise_on:
                raise RuntimeError(f"CUDA error: an illegal memory access was encountered (fake, {key})")
            self.tuned.append(key)
            if key in self.fail:
                self.failed[key] = "fake: the timer threw"
                decisions.append({"key": key, "choice": TACTICS[0], "measured": False, "reason": "failed"})
                continue
            if call.retune or key not in self.entries:
                self.entries[key] = self.entry(key, job)
            decisions.append({"key": key, "choice": self.entries[key]["tactic"], "measured": True, "rank": self.rank})
        return decisions

    def failures(self):
        return dict(self.failed)

    def export(self, keys):
        wanted = set(keys)
        return json.dumps({"format": "fp8gemm-tune-cache", "validators": self.validators,
                           "entries": [self.entries[k] for k in sorted(self.entries) if k in wanted]}, indent=1)

    def export_all(self):
        return self.export(self.entries)

    def import_(self, text, replace):
        data = json.loads(text)
        if data["validators"] != self.validators:
            raise ValueError("import_entries refuses the bytes: it is an fp8gemm tuning cache for another setup")
        report = {"added": [], "replaced": [], "unchanged": [], "kept_local": [], "refused": []}
        for e in data["entries"]:
            key, mine = e["key"], self.entries.get(e["key"])
            if e["tactic"] in self.refuse:
                report["refused"].append(f"{key}: {e['tactic']}: fake: refused")
            elif mine == e:
                report["unchanged"].append(key)
            elif mine is not None and not replace:
                report["kept_local"].append(key)
            else:
                report["replaced" if mine is not None else "added"].append(key)
                self.entries[key] = e
        return report

    def forget(self, keys):
        gone = [k for k in keys if k in self.entries]
        for k in gone:
            del self.entries[k]
        return len(gone)

    def keys(self):
        return list(self.entries)

    def merge(self, path):
        if os.path.exists(path):
            for e in json.load(open(path))["entries"]:
                self.entries.setdefault(e["key"], e)

    def save(self, path):
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(self.export_all())
        os.replace(tmp, path)
        self.saved.append(path)

    def scope_begin(self, enabled):
        return 1

    def scope_end(self, handle):
        pass

    def lazy_tune(self, key, job):
        """What lazy tuning inside an autotune scope does when this rank meets `key`."""
        self.entries.setdefault(key, self.entry(key, job, lazy=True))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(rank, world, port, target, q):
    started = time.monotonic()
    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=20))
        started = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = target(rank, world)
        q.put({"rank": rank, "ok": True, "value": value, "warnings": [str(w.message) for w in caught],
               "elapsed": time.monotonic() - started})
    except BaseException as e:  # noqa: BLE001 - reported to the test
        q.put({"rank": rank, "ok": False, "type": type(e).__name__, "message": str(e),
               "ranks": getattr(e, "ranks", None), "step": getattr(e, "step", None),
               "elapsed": time.monotonic() - started})
    finally:
        q.close()
        q.join_thread()
        os._exit(0)  # no gloo teardown: after a timeout, sends to the missing rank are still posted


def run_ranks(target, world, wait_for=None, deadline_s=30.0):
    """Runs target(rank, world) in `world` forked processes of one gloo group and returns
    {rank: outcome} for the ranks of `wait_for` (default all): {"ok", "value" or "type",
    "message", "ranks", "step", "warnings", "elapsed"}. Stragglers are killed, so a hang fails
    the test at deadline_s instead of stalling CI."""
    wait_for = set(range(world) if wait_for is None else wait_for)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_child, args=(r, world, port, target, q), daemon=True) for r in range(world)]
    with warnings.catch_warnings():  # Python 3.12+ warns of fork() in a process with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        for p in procs:
            p.start()
    results, end = {}, time.monotonic() + deadline_s
    try:
        while not wait_for <= set(results):
            try:
                out = q.get(timeout=max(end - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"ranks {sorted(wait_for - set(results))} did not finish within {deadline_s} s")
            results[out["rank"]] = out
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join()
    return {r: results[r] for r in sorted(wait_for)}


def install(fake):
    """Makes fp8gemm's group protocol on this rank use `fake` as its tuned cache."""
    distributed._make_local = lambda: fake
    return fake
