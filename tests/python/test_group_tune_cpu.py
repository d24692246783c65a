"""fp8gemm.tune / autotune(group=...) on a CPU group: 2-4 forked ranks on gloo, each with a fake
tuned cache (group_fakes.FakeCache) in place of the GPU. Every rank ends with byte-identical
entries under both strategies; a failing rank is reported and every rank keeps the default; a
rank that does not answer makes the others fail within the timeout, naming it."""

import json
import time

import pytest
import torch
import torch.distributed as dist

import fp8gemm
from fp8gemm import _exchange, _group_plan, distributed
from group_fakes import FakeCache, install, run_ranks

E4M3 = torch.float8_e4m3fn
# Llama-3.1-8B's four layers at TP=2, a few M each: 16 keys.
LAYERS = [(3072, 4096), (4096, 2048), (14336, 4096), (4096, 7168)]
SHAPES = [(m, n, k) for n, k in LAYERS for m in (1, 16, 128, 4096)]


def key_of(m, n, k, batch=1):
    return torch.ops.fp8gemm.tune_keys.default([batch, m, n, k], E4M3, E4M3, torch.bfloat16, 100.0, 0.0, [])[0]


def entries_of(outcomes):
    return {r: o["value"]["entries"] for r, o in outcomes.items()}


def assert_all_ok(outcomes):
    for r, o in outcomes.items():
        assert o["ok"], f"rank {r}: {o.get('type')}: {o.get('message')}"


@pytest.mark.parametrize("strategy,world", [("merge", 3), ("broadcast", 2), (None, 4)])
def test_every_rank_ends_with_byte_identical_entries(strategy, world):
    def rank_main(rank, world):
        fake = install(FakeCache(rank))
        # Entries of each rank's own from before (a per-rank cache file): the owner's wins everywhere.
        seeded = key_of(*SHAPES[0])
        fake.entries[seeded] = dict(fake.entry(seeded, (1, 1, 3072, 4096)), us=float(rank))
        shapes = SHAPES if rank else SHAPES[:-2]  # the union is tuned: rank 0 lacks two shapes
        decisions = fp8gemm.tune(shapes, group=dist.group.WORLD, strategy=strategy, timeout=10)
        return {"entries": fake.export_all(), "tuned": fake.tuned,
                "owners": [d["tuned_on_rank"] for d in decisions], "keys": [d["key"] for d in decisions]}

    outcomes = run_ranks(rank_main, world)
    assert_all_ok(outcomes)
    entries = entries_of(outcomes)
    assert len(set(entries.values())) == 1, "ranks differ"
    assert len(json.loads(entries[0])["entries"]) == len(SHAPES)
    tuned = [o["value"]["tuned"] for o in outcomes.values()]
    assert sorted(sum(tuned, [])) == sorted(key_of(*s) for s in SHAPES)  # each key once, on one rank
    owner = outcomes[0]["value"]["owners"][0]
    seeded = {e["key"]: e for e in json.loads(entries[0])["entries"]}[key_of(*SHAPES[0])]
    assert seeded["us"] == float(owner)  # the key each rank had an entry for: its owner's entry
    if strategy == "broadcast":
        assert tuned[0] and not any(tuned[1:])
    else:
        assert all(tuned), "merge gave a rank nothing"
    # Alone, the ranks would have chosen differently: the entries are one rank's, not each its own.
    alone = {FakeCache(r).entry(key_of(*SHAPES[0]), (1, 1, 3072, 4096))["tactic"] for r in range(world)}
    assert len(alone) > 1
    assert outcomes[1]["value"]["keys"] == [key_of(*s) for s in SHAPES]  # one decision per shape, in order


def test_merge_splits_by_cost_and_keeps_a_shape_together():
    jobs = [(1, m, n, k) for n, k in LAYERS for m in (1, 16, 128, 1024, 4096, 16384)]
    owners = _group_plan.owners_for(jobs, 2, "merge", 100.0)
    assert owners == _group_plan.owners_for(list(reversed(jobs)), 2, "merge", 100.0)  # order-free
    cost = [sum(_group_plan.estimated_cost_ms(j, 100.0) for j in jobs if owners[j] == r) for r in (0, 1)]
    assert max(cost) < 0.75 * sum(cost)
    shapes_on = {r: {(j[2], j[3]) for j in jobs if owners[j] == r} for r in (0, 1)}
    assert len(shapes_on[0] & shapes_on[1]) <= 1  # one cut at most splits a shape
    assert set(_group_plan.owners_for(jobs, 4, "broadcast", 100.0).values()) == {0}
    assert sorted(_group_plan.owners_for(jobs[:2], 2, "merge", 100.0).values()) == [0, 1]


@pytest.mark.parametrize("how", ["measuring fails", "tune raises"])
def test_a_key_failing_on_rank_1_keeps_the_default_everywhere(how):
    # A key that merge gives rank 1 of 2.
    jobs = {key_of(*s): (1, torch.ops.fp8gemm.m_bucket(s[0]), s[1], s[2]) for s in SHAPES}
    owners = _group_plan.owners_for(list(jobs.values()), 2, "merge", 100.0)
    bad = next(key for key, job in jobs.items() if owners[job] == 1)

    def rank_main(rank, world):
        fake = FakeCache(rank, **({"fail": [bad]} if how == "measuring fails" else {"raise_on": [bad]}) if rank == 1
                         else {})
        if rank == 0:  # an entry of its own from before: it must go too, as rank 1 keeps none
            fake.entries[bad] = fake.entry(bad, jobs[bad])
        install(fake)
        decisions = fp8gemm.tune(SHAPES, group=dist.group.WORLD, timeout=10)
        return {"entries": fake.export_all(), "fallback": {d["key"]: d.get("group_fallback") for d in decisions}}

    outcomes = run_ranks(rank_main, 2)
    assert_all_ok(outcomes)
    entries = entries_of(outcomes)
    assert entries[0] == entries[1]
    kept = {e["key"] for e in json.loads(entries[0])["entries"]}
    assert bad not in kept
    for r, o in outcomes.items():
        why = o["value"]["fallback"][bad]
        assert why and "rank 1 failed to tune it" in why, (r, why)
        assert any(bad in w and "keep the default on every rank" in w for w in o["warnings"]), o["warnings"]
    if how == "tune raises":  # every key of rank 1's share keeps the default
        assert "illegal memory access" in outcomes[0]["value"]["fallback"][bad]
        assert kept == {k for k, job in jobs.items() if owners[job] == 0}
    else:
        assert len(kept) == len(SHAPES) - 1


def test_an_entry_a_rank_cannot_run_is_forgotten_everywhere():
    def rank_main(rank, world):
        # Rank 1 cannot run small_m tactics (say the backend is not built there).
        fake = install(FakeCache(rank, refuse=["small_m:wgmma,rows=47"] if rank == 1 else []))
        fp8gemm.tune(SHAPES, group=dist.group.WORLD, strategy="broadcast", timeout=10)
        return {"entries": fake.export_all()}

    outcomes = run_ranks(rank_main, 2)
    assert_all_ok(outcomes)
    entries = entries_of(outcomes)
    assert entries[0] == entries[1]
    assert "small_m:" not in entries[0]
    assert any("cannot use the entry of rank 0" in w for w in outcomes[0]["warnings"])


@pytest.mark.parametrize("missing", [2, 0])
def test_a_rank_that_never_comes_is_named_within_the_timeout(missing):
    def rank_main(rank, world):
        install(FakeCache(rank))
        if rank == missing:
            time.sleep(30)  # never calls tune (killed by the harness)
        fp8gemm.tune(SHAPES[:4], group=dist.group.WORLD, timeout=1.0)

    present = [r for r in range(3) if r != missing]
    outcomes = run_ranks(rank_main, 3, wait_for=present)
    for r in present:
        o = outcomes[r]
        assert not o["ok"] and o["type"] == "GroupTimeoutError", o
        assert o["ranks"] == [missing] and o["step"] == "request"
        assert f"rank {missing} of the group's 3 ranks did not answer within 1 s" in o["message"]
        assert o["elapsed"] < 3.0


def test_a_rank_that_tunes_past_the_timeout_is_named():
    def rank_main(rank, world):
        install(FakeCache(rank, tune_sleep_s=4.0 if rank == 1 else 0.0))
        fp8gemm.tune(SHAPES, group=dist.group.WORLD, timeout=1.0)

    o = run_ranks(rank_main, 2, wait_for=[0])[0]
    assert o["type"] == "GroupTimeoutError" and o["ranks"] == [1] and o["step"] == "shares", o
    assert o["elapsed"] < 3.0


def test_another_setup_or_other_arguments_stop_every_rank():
    def other_gpu(rank, world):
        install(FakeCache(rank, validators=dict(FakeCache(0).validators, gpu_name="NVIDIA H100") if rank else None))
        fp8gemm.tune(SHAPES, group=dist.group.WORLD, timeout=10)

    for o in run_ranks(other_gpu, 2).values():
        assert o["type"] == "GroupError" and "rank 1 differs: gpu_name is 'NVIDIA H100' there" in o["message"], o

    def other_budget(rank, world):
        fake = install(FakeCache(rank))
        try:
            fp8gemm.tune(SHAPES, group=dist.group.WORLD, key_budget_ms=50 if rank else 100, timeout=10)
        finally:
            assert fake.tuned == []  # refused before anyone tuned

    for o in run_ranks(other_budget, 2).values():
        assert o["type"] == "GroupError" and "key_budget_ms is 50.0 there and 100.0 on rank 0" in o["message"], o


def test_a_bad_argument_on_one_rank_stops_every_rank_at_once():
    def rank_main(rank, world):
        install(FakeCache(rank))
        fp8gemm.tune([(16, 4095 if rank else 4096, 4096)], group=dist.group.WORLD, timeout=10)

    outcomes = run_ranks(rank_main, 2)
    assert outcomes[1]["type"] == "ValueError" and "n must be a multiple of 16" in outcomes[1]["message"]
    assert outcomes[0]["type"] == "GroupError"
    assert "rank 1 cannot tune: ValueError: fp8gemm: n must" in outcomes[0]["message"]
    assert outcomes[0]["elapsed"] < 2.0  # told, not timed out


def test_a_group_writes_one_cache_file_every_rank_agrees_on(tmp_path):
    path = str(tmp_path / "tp.json")

    def rank_main(rank, world):
        fake = install(FakeCache(rank))
        fp8gemm.tune(SHAPES, group=dist.group.WORLD, cache=path, timeout=10)
        return {"entries": fake.export_all(), "saved": fake.saved}

    outcomes = run_ranks(rank_main, 2)
    assert_all_ok(outcomes)
    with open(path) as f:
        assert f.read() == outcomes[0]["value"]["entries"] == outcomes[1]["value"]["entries"]

    def one_cannot_save(rank, world):
        install(FakeCache(rank))
        fp8gemm.tune(SHAPES[:2], group=dist.group.WORLD, cache=path if rank == 0 else str(tmp_path / "no/such.json"),
                     timeout=10)

    outcomes = run_ranks(one_cannot_save, 2)
    assert outcomes[1]["type"] == "FileNotFoundError"
    assert outcomes[0]["type"] == "GroupError" and "rank 1 could not save" in outcomes[0]["message"]


@pytest.mark.parametrize("strategy", ["merge", "broadcast"])
def test_autotune_scope_gives_every_rank_the_entries_tuned_inside(strategy):
    met = {0: SHAPES[:6], 1: SHAPES[3:]}  # each rank meets some keys, some both

    def rank_main(rank, world):
        fake = install(FakeCache(rank))
        with fp8gemm.autotune(group=dist.group.WORLD, strategy=strategy, timeout=10):
            for m, n, k in met[rank]:
                fake.lazy_tune(key_of(m, n, k), (1, torch.ops.fp8gemm.m_bucket(m), n, k))
        return {"entries": fake.export_all()}

    outcomes = run_ranks(rank_main, 2)
    assert_all_ok(outcomes)
    entries = entries_of(outcomes)
    assert entries[0] == entries[1]
    got = {e["key"]: e for e in json.loads(entries[0])["entries"]}
    assert set(got) == {key_of(*s) for s in SHAPES}
    both = [key_of(*s) for s in SHAPES[3:6]]
    if strategy == "broadcast":  # rank 0's measurement of the keys both met
        assert all(got[k] == FakeCache(0).entry(k, (got[k]["batch"], got[k]["m_bucket"], got[k]["n"], got[k]["k"]),
                                                lazy=True) for k in both)


def test_the_scope_tells_the_others_when_a_rank_raises_inside():
    def rank_main(rank, world):
        install(FakeCache(rank))
        with fp8gemm.autotune(group=dist.group.WORLD, timeout=10):
            if rank == 1:
                raise KeyError("the model failed")

    outcomes = run_ranks(rank_main, 2)
    assert outcomes[1]["type"] == "KeyError"
    assert outcomes[0]["type"] == "GroupError"
    assert "rank 1 left the scope with an error: KeyError" in outcomes[0]["message"]
    assert outcomes[0]["elapsed"] < 2.0


def test_an_nccl_group_exchanges_over_a_gloo_group_of_its_ranks(monkeypatch):
    def rank_main(rank, world):
        real = dist.get_backend
        dist.get_backend = lambda group=None: "nccl"  # as an NCCL group says
        ex = _exchange.Exchange(dist.group.WORLD, 10, "fp8gemm.tune")
        dist.get_backend = real
        got = [b.decode() for b in ex.all_gather("t", f"r{rank}".encode())]
        return {"side": ex.group is not dist.group.WORLD, "got": got}

    outcomes = run_ranks(rank_main, 2)
    assert_all_ok(outcomes)
    assert all(o["value"] == {"side": True, "got": ["r0", "r1"]} for o in outcomes.values())


def test_group_arguments_are_checked_first():
    group_of = distributed.group_of
    assert group_of(None, None, 5, "fp8gemm.tune") is None
    with pytest.raises(ValueError, match="strategy must be 'merge' or 'broadcast'"):
        group_of(None, "parallel", 5, "fp8gemm.tune")
    for bad in (0, -1, float("inf"), "10", True):
        with pytest.raises(ValueError, match="timeout must be a finite number of seconds > 0"):
            group_of(None, None, bad, "fp8gemm.tune")
    if not dist.is_initialized():
        with pytest.raises(RuntimeError, match="group needs torch.distributed initialized"):
            fp8gemm.tune(SHAPES, group=object())
    with pytest.raises(ValueError, match="fp8gemm.autotune: strategy must be"):
        fp8gemm.autotune(group=None, strategy="all").__enter__()

    def one_rank(rank, world):
        assert group_of(dist.group.WORLD, None, 5, "fp8gemm.tune") is None  # a group of one tunes alone
        with pytest.raises(TypeError, match="group must be a torch.distributed ProcessGroup"):
            group_of("tp", None, 5, "fp8gemm.tune")
        return {"ok": True}

    assert_all_ok(run_ranks(one_rank, 1))


def test_the_two_gpu_script_keeps_nvlink_multicast_off():
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "tp_tune.py"
    env = {k: v for k, v in os.environ.items() if k not in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST")}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "set NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1" in run.stderr
