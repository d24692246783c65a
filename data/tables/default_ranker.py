"""The ranker of untuned `auto` at 33 <= M <= RANK_M_MAX: gradient-boosted regression trees that
score the floor and three candidate tactics per M range from each one's geometry at the problem
(tile, cluster, waves, padding, kind), and run the lowest score. Fitted by
data/tables/fit_default_rules.py on the benchmarks that time every tactic; src/tune/ranker.cpp
computes the same features and walks the same trees.

Deterministic by construction, so that the CPU test can regenerate the table byte for byte: the
target is an integer (log(time / best) in units of UNIT, clipped at CLIP), every sum over rows is a
sum of integers, and the split thresholds are midpoints between values the data hold.
"""
import math
import re

import numpy as np

CLIP = math.log(1.1)   # regrets beyond 10% are all "bad": so few trees spend no splits ranking them
UNIT = 1e-4            # the target's and the scores' integer unit (log-time)
TREES, DEPTH, RATE, MIN_LEAF, L2 = 40, 6, 0.35, 20, 1.0
BINS = 255             # split candidates per feature at most
RANK_M_MIN, RANK_M_MAX = 33, 16384
# Each range scores the floor and PER_RANGE candidates: those that lower the training points'
# best-in-set time most (greedy).
RANGE_EDGES = [64, 128, 224, 448, 1024, 2048, RANK_M_MAX]
PER_RANGE = 3
SCHEDULES = {"pingpong": 0, "cooperative": 1, "warpspecialized": 2}

FEATURES = ["lm", "ln", "lk", "batch", "ltm", "ltn", "tk", "cn", "cm", "cs", "splitk", "red", "fast_accum",
            "fitted", "swap", "streamk", "custom", "schedule", "pdl", "is_cutlass", "is_floor", "util_m", "util_n",
            "whole_waves", "lwaves", "wave_eff", "last_wave", "lkit", "floor_ltm", "floor_ltn", "floor_cs", "floor_custom",
            "dltm", "dltn"]


def fitted_height(m, parts):
    """src/backends/cublaslt/algo_name.h fitted_height."""
    h = (max(m, 1) + parts - 1) // parts
    return (h + 7) // 8 * 8


def tactic_shape(name, m):
    """A tactic's geometry at M = m in the problem's terms (tm along M, tn along N), as
    Backend::tactic_shape gives it; None for a backend the ranker does not score."""
    backend, cfg = name.split(":", 1)
    if backend == "cublaslt":
        kv = dict(f.split("=") for f in cfg.split(","))
        rows, cols = kv["tile"].split("x")[:2]     # cuBLASLt's rows run along our N
        fitted = int(cols[2:]) if cols.startswith("M/") else 0
        stages = kv["stages"].split("x")[0]
        cluster = kv["cluster"].split("x")
        return dict(tm=fitted_height(m, fitted) if fitted else int(cols), tn=int(rows),
                    tk=int(stages) if stages.isdigit() else 128,
                    cn=int(cluster[0]) if cluster[0].isdigit() else 1,
                    cm=int(cluster[1]) if cluster[0].isdigit() else 1,
                    splitk=int(kv["splitk"]), red=int(kv["red"]), fast_accum=int(kv["fast_accum"]), fitted=fitted,
                    swap=1, streamk=0, custom=int(kv["custom"]), schedule=-1, pdl=0, is_cutlass=0)
    if backend == "cutlass":
        g = re.fullmatch(r"sm90_([a-z]+)_(\d+)x(\d+)x(\d+)_c(\d+)x(\d+)x(\d+)((?:_[a-z0-9]+)*)", cfg)
        sched, a, b, k, c1, c2, _, rest = g.groups()
        flags = rest.split("_")
        swap = "swap" in flags
        a, b, c1, c2 = int(a), int(b), int(c1), int(c2)
        return dict(tm=b if swap else a, tn=a if swap else b, tk=int(k), cn=c1 if swap else c2,
                    cm=c2 if swap else c1, splitk=1, red=0, fast_accum=0 if "acc32" in flags else 1, fitted=0,
                    swap=int(swap), streamk=int("streamk" in flags), custom=-1, schedule=SCHEDULES[sched],
                    pdl=int("pdl" in flags), is_cutlass=1)
    return None


def usable_sms(sms, cluster_size):
    """SMs a grid of clusters of this size can fill: clusters of more than 2 fill groups of 8."""
    return sms if cluster_size <= 2 else sms // 8 * 8


def features(batch, m, n, k, shape, floor, is_floor, sms):
    """The ranker's features (FEATURES order) of a tactic of geometry `shape` at the problem, where
    cuBLASLt's heuristic answers `floor` (a geometry)."""
    s = shape
    cs = s["cn"] * s["cm"]
    tiles_m, tiles_n = -(-m // s["tm"]), -(-n // s["tn"])
    waves = tiles_m * tiles_n * batch * s["splitk"] / usable_sms(sms, cs)
    whole = max(1, math.ceil(waves - 1e-9))
    kit = -(-k // (s["splitk"] * s["tk"]))
    ltm, ltn = math.log2(s["tm"]), math.log2(s["tn"])
    f = dict(lm=math.log2(m), ln=math.log2(n), lk=math.log2(k), batch=batch, ltm=ltm, ltn=ltn, cs=cs,
             is_floor=int(is_floor), util_m=m / (tiles_m * s["tm"]), util_n=n / (tiles_n * s["tn"]),
             whole_waves=whole, lwaves=math.log2(waves), wave_eff=waves / whole, last_wave=waves - (whole - 1),
             lkit=math.log2(kit), floor_ltm=math.log2(floor["tm"]), floor_ltn=math.log2(floor["tn"]),
             floor_cs=floor["cn"] * floor["cm"], floor_custom=floor["custom"],
             dltm=ltm - math.log2(floor["tm"]), dltn=ltn - math.log2(floor["tn"]))
    for key in ("tk", "cn", "cm", "splitk", "red", "fast_accum", "fitted", "swap", "streamk", "custom", "schedule",
                "pdl", "is_cutlass"):
        f[key] = s[key]
    # Rounded so that a last-bit difference between two machines' log2 cannot move a threshold.
    return [round(float(f[x]), 9) for x in FEATURES]


def range_of(m):
    return next(i for i, e in enumerate(RANGE_EDGES) if m <= e)


def in_range(p):
    return RANK_M_MIN <= p.m <= RANK_M_MAX


def scorable(p, t):
    """The rows a point trains on: the floor, the --add-tactic cuBLASLt tiles and CUTLASS's configs."""
    return t == p.floor or t in p.extra["named"] or t.startswith("cutlass:")


def point_features(p, t, sms):
    return features(p.batch, p.m, p.n, p.k, tactic_shape(t, p.m), tactic_shape(p.floor, p.m), t == p.floor, sms)


# ------------------------------------------------------------------------------------- the fit
def bin_edges(col):
    """Thresholds of one feature: midpoints between neighbouring values the data hold, at most
    BINS - 1 of them, spread over the values' ranks."""
    v = np.sort(col)
    u = np.unique(v)
    if len(u) > BINS:
        picks = np.unique(v[(np.arange(1, BINS) * len(v)) // BINS])
        nxt = u[np.minimum(np.searchsorted(u, picks, side="right"), len(u) - 1)]
        keep = nxt > picks
        return (picks[keep] + nxt[keep]) / 2
    return (u[:-1] + u[1:]) / 2


class Trees:
    """Nodes of every tree: feature (-1 at a leaf), threshold (go left where x <= it), left, right
    (node indexes within the tree), value (a leaf's, in UNIT); roots[i] is tree i's first node."""

    def __init__(self):
        self.base, self.nodes, self.roots = 0, [], []

    def score(self, x):
        s = self.base
        for r in self.roots:
            i = r
            while self.nodes[i][0] >= 0:
                f, thr, left, right, _ = self.nodes[i]
                i = r + (left if x[f] <= thr else right)
            s += self.nodes[i][4]
        return s


def fit(X, y):
    """Trees fitted to y (integers, UNIT) on X (rows x FEATURES): squared loss, TREES rounds of
    rate RATE, depth DEPTH, at least MIN_LEAF rows a leaf, L2 on the leaf values."""
    edges = [bin_edges(X[:, j]) for j in range(X.shape[1])]
    B = np.stack([np.searchsorted(e, X[:, j], side="left") for j, e in enumerate(edges)], axis=1)
    nb = max(len(e) for e in edges) + 1
    model = Trees()
    model.base = int(round(float(y.sum()) / len(y)))
    pred = np.full(len(y), model.base, dtype=np.int64)
    for _ in range(TREES):
        grad = (pred - y).astype(np.float64)  # integers: every sum below is exact
        root = len(model.nodes)
        model.roots.append(root)
        tree = [[-1, 0.0, 0, 0, 0]]
        node_of = np.zeros(len(y), dtype=np.int64)
        frontier = [0]
        for depth in range(DEPTH + 1):
            if not frontier:
                break
            slot = np.full(len(tree), -1)
            slot[frontier] = np.arange(len(frontier))
            rs = slot[node_of]
            live = rs >= 0
            G = np.bincount(rs[live], weights=grad[live], minlength=len(frontier))
            N = np.bincount(rs[live], minlength=len(frontier)).astype(np.float64)
            best = [None] * len(frontier)
            if depth < DEPTH:
                for j in range(X.shape[1]):
                    key = rs[live] * nb + B[live, j]
                    g = np.bincount(key, weights=grad[live], minlength=len(frontier) * nb).reshape(-1, nb)
                    c = np.bincount(key, minlength=len(frontier) * nb).reshape(-1, nb).astype(np.float64)
                    gl, cl = np.cumsum(g, axis=1)[:, :-1], np.cumsum(c, axis=1)[:, :-1]
                    gr, cr = G[:, None] - gl, N[:, None] - cl
                    gain = gl * gl / (cl + L2) + gr * gr / (cr + L2) - (G * G / (N + L2))[:, None]
                    gain[(cl < MIN_LEAF) | (cr < MIN_LEAF)] = -1.0
                    gain = gain[:, :len(edges[j])]
                    for s in range(len(frontier)):
                        if gain.shape[1] == 0:
                            continue
                        b = int(np.argmax(gain[s]))
                        if gain[s, b] > 1e-9 * max(1.0, abs(G[s])) and (best[s] is None or gain[s, b] > best[s][0]):
                            best[s] = (gain[s, b], j, b)
            nxt = []
            for s, node in enumerate(frontier):
                if best[s] is None:
                    tree[node][4] = int(round(-RATE * G[s] / (N[s] + L2)))
                    continue
                _, j, b = best[s]
                left, right = len(tree), len(tree) + 1
                tree[node][:4] = [j, float(edges[j][b]), left, right]
                tree += [[-1, 0.0, 0, 0, 0], [-1, 0.0, 0, 0, 0]]
                here = node_of == node
                node_of[here & (B[:, j] <= b)] = left
                node_of[here & (B[:, j] > b)] = right
                nxt += [left, right]
            frontier = nxt
        model.nodes += tree
        values = np.array([n[4] for n in tree], dtype=np.int64)
        pred += values[node_of]
    return model


def target(p, t):
    return int(round(min(math.log(p.times[t] / p.best), CLIP) / UNIT))


def training_rows(points, sms):
    X, y = [], []
    for p in points:
        for t in sorted(p.times):
            if scorable(p, t):
                X.append(point_features(p, t, sms))
                y.append(target(p, t))
    return np.array(X), np.array(y, dtype=np.int64)


def candidates(points):
    """PER_RANGE tactics per M range, greedy: each lowers the training points' sum of
    log(best in the set / best) most, the floor always in the set (ties: the name first in order)."""
    out = []
    names = sorted({t for p in points for t in p.times if scorable(p, t) and t != p.floor})
    for r in range(len(RANGE_EDGES)):
        pts = [p for p in points if range_of(p.m) == r]
        cur = [math.log(p.floor_us() / p.best) for p in pts]
        chosen = []
        while len(chosen) < PER_RANGE and pts:
            cost = {}
            for t in names:
                if t not in chosen:
                    cost[t] = math.fsum(min(c, math.log(p.times[t] / p.best)) if t in p.times else c
                                        for c, p in zip(cur, pts))
            t = min(cost, key=lambda n: (round(cost[n], 9), n))
            chosen.append(t)
            cur = [min(c, math.log(p.times[t] / p.best)) if t in p.times else c for c, p in zip(cur, pts)]
        out.append(chosen)
    return out


class Ranker:
    def __init__(self, points, sms):
        self.sms = sms
        pts = [p for p in points if in_range(p) and p.dense]
        X, y = training_rows(pts, sms)
        self.trees = fit(X, y)
        self.lists = candidates(pts)
        self.points, self.rows = len(pts), len(y)

    def choose(self, p):
        """The tactic the ranker runs at p (None: the floor), among those p timed (a benchmark's
        point timed every tactic that can run it); the floor's score wins ties."""
        best_t, best = None, self.trees.score(point_features(p, p.floor, self.sms))
        for t in self.lists[range_of(p.m)]:
            if t in p.times or not p.dense:
                s = self.trees.score(point_features(p, t, self.sms))
                if s < best:
                    best_t, best = t, s
        return best_t


# ------------------------------------------------------------------------------------ the table
def checks(points, ranker, count=12):
    """(point, tactic, score) of `count` training rows spread over the M ranges: the C++ ranker
    must score them the same."""
    rows = [(p, t) for p in points if in_range(p) and p.dense for t in sorted(p.times) if scorable(p, t)]
    rows.sort(key=lambda r: (r[0].m, r[0].batch, r[0].n, r[0].k, r[1]))
    picks = [rows[(i * len(rows)) // count + (i % 2)] for i in range(count)]
    return [(p, t, ranker.trees.score(point_features(p, t, ranker.sms))) for p, t in picks]


def cpp(ranker, points, header, evidence):
    """src/tune/default_ranker_sm90.cpp."""
    q = '"'
    nodes = [f"{{{f}, {repr(thr) if f >= 0 else '0.0'}, {left}, {right}, {value}}}"
             for f, thr, left, right, value in ranker.trees.nodes]
    node_lines = [", ".join(nodes[i:i + 4]) + "," for i in range(0, len(nodes), 4)]
    roots = ", ".join(str(r) for r in ranker.trees.roots)
    lo = RANK_M_MIN
    ranges = []
    for edge, names in zip(RANGE_EDGES, ranker.lists):
        ranges.append(f"{{{lo}, {edge}, {{" + ", ".join(q + n + q for n in names) + "}},")
        lo = edge + 1
    check_lines = [f"{{{p.batch}, {p.m}, {p.n}, {p.k}, {q}{t}{q}, {q}{p.floor}{q}, {s}}},"
                   for p, t, s in checks(points, ranker)]
    ind = "\n      "
    return (header +
            f"// {evidence}\n"
            '#include "tune/ranker.h"\n\n'
            "namespace fp8gemm::tuning {\n\n"
            "namespace {\n\n"
            "// {feature (-1: a leaf), threshold (left where the feature is <= it), left, right, leaf value}\n"
            "constexpr RankerNode kNodes[] = {\n" + "\n".join("    " + line for line in node_lines) + "\n};\n\n"
            "}  // namespace\n\n"
            "const RankerModel& sm90_ranker() {\n"
            "  static const RankerModel model = {\n"
            f"      {ranker.trees.base},\n"
            "      kNodes,\n"
            f"      {{{roots}}},\n"
            "      {" + ", ".join(q + f + q for f in FEATURES) + "},\n"
            "      {" + ind + ind.join(ranges) + "},\n"
            f"      {ranker.sms},\n"
            "      {" + ind + ind.join(check_lines) + "},\n"
            "  };\n  return model;\n}\n\n}  // namespace fp8gemm::tuning\n")
