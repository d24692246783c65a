"""The measurements the default rules are fitted on, as points: one (shape, batch, M) and every
tactic timed there. Read by tools/tables/fit_default_rules.py.

A point of a tune (`fp8gemm tune --json`) is a tuned key's edge (M = the bucket's edge: every
candidate's time, the full round's median for the default and the finalists, the short round's for
the pruned ones) or one of its samples below the edge (M = sampled_m: the default there and the
edge's finalists). Short-round times are put on the full round's scale with the key's own default
(full / short), as the tuner does when it ranks finalists for the samples; they stay noisier. The
segment checks' "low end" rows time two or three contenders only and are not points.

A point of a benchmark (`fp8gemm bench --tactics all --json`, read_bench_points) is one (shape,
batch, M) with every tactic of the benched backends and every --add-tactic name timed: the full
round's median for the finalists and the named tactics, the short round's for the pruned ones. A
tactic with no time there could not run the problem, so a rule naming it falls back to the floor.
"""
import gzip
import json
import lzma
import os
import re
import subprocess

SMS = 132  # the H200's, which measured every file
EDGES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
         6144, 8192, 12288, 16384]  # m_bucket_edges() in src/tune/keys/tune_key.cpp


def open_any(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt")
    if path.endswith(".xz"):
        return lzma.open(path, "rt")
    return open(path)


def read_json(path):
    """A tune's or a benchmark's JSON (.json, .gz, .xz), its tactic names as the library prints them
    now: small_m names of runs made before the dead l2pf=0 field was dropped lose it
    (src/backends/small_m/small_m_config.h legacy_name; the field appears in no other name)."""
    with open_any(path) as f:
        return json.loads(f.read().replace(",l2pf=0,", ","))


def read_shapes(path):
    """{(n, k): name} of a shape list (name N K, '#' comments)."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, n, k = line.split()
            out[(int(n), int(k))] = name
    return out


class Point:
    """One (shape, batch, M) of a tune or a benchmark: times[tactic] in us, kinds[tactic] 'full' or
    'short'."""
    __slots__ = ("n", "k", "batch", "m", "edge", "source", "times", "kinds", "floor", "best", "feat", "extra", "dense")

    def __init__(self, d, m, edge, source, times, kinds, floor):
        self.n, self.k, self.batch = d["n"], d["k"], d["batch"]
        self.m, self.edge, self.source = m, edge, source
        self.times, self.kinds, self.floor = times, kinds, floor
        self.best = min(times.values())
        self.extra = {}
        self.dense = False  # every tactic that can run the problem was timed (a benchmark's point)
        self.feat = {"m": m, "n": self.n, "k": self.k, "batch": self.batch, "weight": self.n * self.k * self.batch,
                     "k128": 1 if self.k % 128 == 0 else 0,
                     "rows_per_sm": -(-self.n * self.batch // SMS)}

    @property
    def shape(self):
        return (self.n, self.k)

    def floor_us(self):
        return self.times[self.floor]


def points_of(d, source, usable):
    """The points of one decision; tactics for which usable(name) is false are left out."""
    out = []
    if not d.get("measured"):
        return out
    scale = 1.0
    for c in d["candidates"]:
        if c["status"] == "default" and c["short_us"] > 0:
            scale = c["us"] / c["short_us"]
    times, kinds = {}, {}
    for c in d["candidates"]:
        if not usable(c["tactic"]) or c["us"] <= 0:
            continue
        if c["status"] in ("default", "finalist"):
            times[c["tactic"]], kinds[c["tactic"]] = c["us"], "full"
        elif c["status"] == "pruned":
            times[c["tactic"]], kinds[c["tactic"]] = c["us"] * scale, "short"
    if d["floor"] in times:
        out.append(Point(d, d["m_bucket"], True, source, times, kinds, d["floor"]))
    for s in d.get("segments", []):
        if s.get("sampled_m", d["m_bucket"]) == d["m_bucket"]:
            continue
        times, kinds = {}, {}
        for c in s.get("candidates", []):
            if c["status"] in ("default", "finalist") and usable(c["tactic"]) and c["us"] > 0:
                times.setdefault(c["tactic"], c["us"])
                kinds.setdefault(c["tactic"], "full")
        if s.get("default") in times:
            out.append(Point(d, s["sampled_m"], False, source, times, kinds, s["default"]))
    return out


def read_points(path, accept, usable):
    """Points of one tune file whose bucket accept(m_bucket) takes."""
    doc = read_json(path)
    dev = doc.get("device", {})
    if dev.get("compute_capability") not in (None, 90):
        raise SystemExit(f"{path}: compute capability {dev.get('compute_capability')}; these rules are sm_90's")
    name = os.path.basename(path)
    out = []
    for d in doc["decisions"]:
        if accept(d["m_bucket"]):
            out.extend(points_of(d, name, usable))
    return dev, out


def read_bench_points(path, usable):
    """The points of one `fp8gemm bench --json` file (every timed tactic; the floor is the
    cublaslt_default entry's tactic); tactics for which usable(name) is false are left out."""
    doc = read_json(path)
    name = os.path.basename(path)
    out = []
    for q in doc["points"]:
        floor = next((e["tactic"] for e in q["entries"] if e["label"] == "cublaslt_default" and e["ok"]), None)
        times, kinds = {}, {}
        for t in q["timings"]:
            if t["ok"] and t["median_us"] > 0 and usable(t["tactic"]):
                times[t["tactic"]] = t["median_us"]
                kinds[t["tactic"]] = "full" if len(t["samples_us"]) > 1 else "short"
        if floor not in times:
            continue
        d = {"n": q["N"], "k": q["K"], "batch": q["batch"]}
        p = Point(d, q["M"], q["M"] in EDGES, name, times, kinds, floor)
        p.dense = True
        p.extra["named"] = {e["tactic"] for e in q["entries"] if e["label"].startswith("named_")}
        out.append(p)
    return out


def source_arg(arg):
    """'FILE' or 'FILE:m<=N' / 'FILE:m>N' -> (path, accept(m_bucket))."""
    m = re.fullmatch(r"(.+):m(<=|>)(\d+)", arg)
    if not m:
        return arg, lambda bucket: True
    n = int(m.group(3))
    return m.group(1), (lambda b: b <= n) if m.group(2) == "<=" else (lambda b: b > n)


class RecipeTool:
    """fp8gemm_small_m_recipes (tools/tables): small_m's recipe math, one request a line."""

    def __init__(self, path, sms):
        self.path, self.sms = path, sms

    def ask(self, lines):
        if not lines:
            return []
        r = subprocess.run([self.path, "--sms", str(self.sms)], input="\n".join(lines) + "\n", capture_output=True,
                           text=True, check=True)
        out = r.stdout.split("\n")[:-1]
        if len(out) != len(lines):
            raise SystemExit(f"{self.path}: {len(out)} answers to {len(lines)} requests")
        return [o.split("\t") if o else [] for o in out]

    @staticmethod
    def problem(p):
        return f"{p.batch} {p.m} {p.n} {p.k}"

    def cutlass_names(self):
        """Every CUTLASS tactic name of configs.def (with its _pdl twin where it has one)."""
        return set(self.ask(["cutlass 1 1 16 16"])[0])
