#!/usr/bin/env python3
"""Fit the default rules of `auto` untuned from H200 tunes, and check them on shapes they never saw.

    python3 tools/tables/fit_default_rules.py --tool build/tools/tables/fp8gemm_small_m_recipes [--write]

reads the tunes and benchmarks (data/tables/README.md), holds out the shapes of
data/tables/sm90/validation_shapes.txt, fits three sets of rules on the rest and prints, for the
held-out shapes and for the DESIGN suite, per M range, untuned auto's time over the best timed
tactic next to the floor's. With --write it (re)generates

    src/core/tables/sm90/small_m_rules.inc   small_m's default: shape box -> recipes
    src/core/tables/sm90/cutlass_rules.inc   CUTLASS's default: shape box -> config
    src/core/tables/sm90/selector_rules.inc  the selector: shape box -> backend default

(under --out, default the repository). The CPU test Scripts.DefaultRulesAreRegeneratedFromTheirTunes
regenerates them and requires the committed files byte for byte.

The fit, stage by stage (each a tree per cell = (batch 1 or 2, k % 128 == 0 or not) and M range,
tools/tables/default_rules_fit.py):
  1. small_m (M <= 32): the recipes (src/backends/small_m/small_m_recipe.h) of every timed small_m
     config; a leaf holds an ordered list, the first recipe whose config is one of small_m's
     candidates for the problem runs, else small_m's fill rule (its default before these rules).
  2. CUTLASS: the config of the lowest time over the leaf's points.
  3. The selector: per leaf, small_m's or CUTLASS's default (as stages 1 and 2 answer at each
     point) or, on the benchmarks' points, any CUTLASS config or --add-tactic cuBLASLt tile they
     timed, kept where it beats the floor by MARGIN on the leaf's points, else the floor.
A tactic a rule names but the data did not time at a point is "unmeasured": fitting counts it as
the fallback (stage 3: the floor), the report counts it and says so.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import default_rules_emit as emit  # noqa: E402
import default_rules_fit as fit  # noqa: E402
from default_rules_data import EDGES, RecipeTool, read_bench_points, read_points, read_shapes, source_arg  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "data", "tables")  # the measurements (data/tables/README.md)
# The tunes (empty-table binaries: every decision's default is the floor), relative to data/tables.
SUITE = ["sm90/h200_tune_all_buckets.json.gz:m>32", "sm90/h200_tune_m1-32_a.json.gz",
         "sm90/h200_tune_m1-32_b.json.gz"]
WIDE = ["sm90/h200_tune_wide_batch1.json.xz", "sm90/h200_tune_wide_batch2.json.xz"]
# Benchmarks of the training shapes with every tactic timed (data/tables/README.md): where they
# cover an M range, the selector is fitted on them alone, and may name outright the tactics they
# timed wherever those can run (dense_actions).
DENSE = sorted(f"sm90/{f}" for f in os.listdir(os.path.join(DATA, "sm90")) if f.startswith("h200_bench_dense_"))
VALIDATION = "sm90/validation_shapes.txt"
SMS = 132  # the H200's, which measured every file

# The trees' sizes (chosen by 5-fold cross-validation over the training shapes, --cv) and the
# selector's acceptance margin: a backend's default replaces the floor in a leaf only where it is
# at least this much faster over the leaf's points (geomean).
SMALL_M = dict(depth=5, min_shapes=3, list_len=4)
CUTLASS = dict(depth=3, min_shapes=4)
SELECTOR = dict(depth=3, min_shapes=8)
MARGIN = 0.02
CV_GRID = [dict(SMALL_M=dict(depth=d, min_shapes=s), SELECTOR=dict(depth=e, min_shapes=t))
           for d, s in ((3, 4), (4, 3), (5, 3)) for e, t in ((2, 6), (3, 4), (3, 8))]
FOLDS = 5
CONSISTENT = 0.75
M_RANGES = [(1, 32), (33, 64), (65, 256), (257, 2048), (2049, 16384)]
# CUTLASS's best config follows its M tiles: its trees are per M bucket.
BUCKETS = [(lo + 1, hi) for lo, hi in zip([0] + EDGES[:-1], EDGES)]
BATCHES = (1, 2)  # the data's; other batches keep the floor
UNTIMED = math.log(1.3)  # a config the data has no time for, where a stage must rank it: as slow as pruned
# small_m recipes worth a rule: rows 32/64/128 or fitted to blocks per SM, the ring per SM (a fixed
# fitted row count or ring depth names one shape, not a kind of kernel).
FEATURES = ["m", "n", "k", "weight"]
# small_m's kernels differ by how the weight rows spread over the SMs (rows per SM = ceil(n * batch /
# SMs)): up to 32, K pairs (32-row blocks) fill the SMs without split-K; up to 127, fitted rows give
# one block per SM; above, two or more blocks per SM. Its trees start from these regimes.
SMALL_M_REGIMES = [(1, 32), (33, 127), (128, 1 << 40)]
SMALL_M_FEATURES = ["m", "rows_per_sm", "k", "weight", "k128", "batch"]
SMALL_M_CELLS = [(1, 8)]
SELECTOR_CELLS = [((1, 8), (0, 1))]
SELECTOR_FEATURES = ["m", "n", "k", "weight", "k128", "batch"]


def general_recipe(r):
    rows = r.split(",rows=")[1].split(",")[0]
    ring = r.split(",ring=")[1].split(",")[0]
    return (rows in ("32", "64", "128") or rows.startswith("fit")) and "sm" in ring


def cell_of(p):
    return (p.batch, p.feat["k128"])


def m_range(m):
    for lo, hi in M_RANGES:
        if lo <= m <= hi:
            return (lo, hi)
    return None


def load(tool):
    cutlass_names = tool.cutlass_names()
    names = set()
    raw = []
    def listed(t):  # the adaptive floor resolves to another tactic at each M: never a point's own
        return t != "cublaslt:heuristic"

    for arg in SUITE + WIDE + DENSE:
        path, accept = source_arg(os.path.join(DATA, arg))
        if arg in DENSE:
            pts = read_bench_points(path, listed)
        else:
            _, pts = read_points(path, accept, listed)
        raw.extend(pts)
        for p in pts:
            names.update(t for t in p.times if t.startswith("small_m:"))
    names = sorted(names)
    parsed = tool.ask(["recipes 1 1 4096 4096 " + n[len("small_m:"):] for n in names])
    gone = {n for n, r in zip(names, parsed) if r and r[0].startswith("!")}

    def usable(t):
        if t.startswith("cutlass:"):
            return t in cutlass_names
        return t not in gone

    points = []
    for p in raw:
        p.times = {t: v for t, v in p.times.items() if usable(t)}
        p.kinds = {t: v for t, v in p.kinds.items() if t in p.times}
        if p.floor in p.times:
            p.best = min(p.times.values())
            points.append(p)
    return points


def small_m_items(tool, points):
    """Stage 1's items, one per point of M <= 32: every general recipe of every timed small_m
    config (log of time / best), and the fill rule's value where no recipe applies."""
    pts = [p for p in points if p.m <= 32]
    cands = tool.ask(["candidates " + RecipeTool.problem(p) for p in pts])
    for p, c in zip(pts, cands):
        p.extra["candidates"] = {"small_m:" + x.split(" ")[0] for x in c}
        p.extra["fill"] = "small_m:" + c[0].split(" ")[0] if c else None
    timed = [[t for t in sorted(p.times) if t.startswith("small_m:")] for p in pts]
    recipes = tool.ask(["recipes " + RecipeTool.problem(p) + " " + " ".join(t[8:] for t in ts)
                        for p, ts in zip(pts, timed)])
    items = []
    for p, ts, rs in zip(pts, timed, recipes):
        vals = {}
        for t, r in zip(ts, rs):
            v = math.log(p.times[t] / p.best)
            for recipe in r.split(" "):
                if general_recipe(recipe) and v < vals.get(recipe, 1e9):
                    vals[recipe] = v
        fill = p.extra["fill"]
        items.append(fit.Item(p, vals, math.log(p.times[fill] / p.best) if fill in p.times else UNTIMED))
    return items


def small_m_rules(items, shapes):
    """Stage 1: small_m's rules, fitted on the items of `shapes`."""
    rules = []
    for cell, regime in [(c, r) for c in SMALL_M_CELLS for r in SMALL_M_REGIMES]:
        train = [it for it in items if it.point.batch in cell and it.shape in shapes and
                 regime[0] <= it.point.feat["rows_per_sm"] <= regime[1]]
        if len({it.shape for it in train}) < SMALL_M["min_shapes"]:
            continue
        tree = fit.grow(train, SMALL_M_FEATURES, SMALL_M["depth"], SMALL_M["min_shapes"])
        for path, leaf in tree.leaves():
            path = (("batch", ">=", cell[0]), ("batch", "<", cell[-1] + 1), ("rows_per_sm", ">=", regime[0]),
                    ("rows_per_sm", "<", regime[1] + 1)) + path
            leaf.list = fit.front_list(leaf.items, SMALL_M["list_len"])
            if not leaf.list:
                continue
            n = len(leaf.items)
            g = math.exp(sum(fit.list_value(leaf.list, it) for it in leaf.items) / n)
            f = math.exp(sum(it.miss for it in leaf.items) / n)
            rules.append(emit.Rule(fit.box_of(path), M_RANGES[0], "|".join(leaf.list),
                                   f"fitted on {n} points ({len({it.shape for it in leaf.items})} shapes): "
                                   f"{g:.3f} of the best there (the fill rule {f:.3f})"))
    return rules


def small_m_picks(tool, rules, items):
    """{id(point): the config small_m's rules choose there}: the first recipe of the first rule that
    covers the point whose config is one of small_m's candidates; None where no rule chooses (the
    fill rule runs for backend "small_m", and the selector does not count small_m's default)."""
    asks, where = [], []
    for it in items:
        r = emit.first_rule(rules, it.point)
        if r:
            asks.append("configs " + RecipeTool.problem(it.point) + " " + " ".join(r.action.split("|")))
            where.append(it.point)
    out = {}
    for p, configs in zip(where, tool.ask(asks)):
        out[id(p)] = next(("small_m:" + c for c in configs if "small_m:" + c in p.extra["candidates"]), None)
    return out


def cell_path(cell):
    """A cell ((batch lo, hi), (k128 lo, hi)) as tree path steps."""
    (b0, b1), (a0, a1) = cell
    return (("batch", ">=", b0), ("batch", "<", b1 + 1), ("k128", ">=", a0), ("k128", "<", a1 + 1))


def in_cell(p, cell):
    (b0, b1), (a0, a1) = cell
    return b0 <= p.batch <= b1 and a0 <= p.feat["k128"] <= a1


def cells():
    return [((b, b), (a, a)) for b in BATCHES for a in (1, 0)]


def cutlass_items(points):
    return [fit.Item(p, {t: math.log(v / p.best) for t, v in p.times.items() if t.startswith("cutlass:")}, UNTIMED)
            for p in points]


def cutlass_rules(items, shapes):
    """Stage 2: CUTLASS's rules, fitted on the items of `shapes`: per cell and M bucket, the config
    of the lowest time over each leaf's points."""
    rules = []
    for cell in cells():
        for rng in BUCKETS:
            train = [it for it in items if in_cell(it.point, cell) and rng[0] <= it.point.m <= rng[1] and
                     it.shape in shapes]
            if len({it.shape for it in train}) < CUTLASS["min_shapes"]:
                continue
            tree = fit.grow(train, FEATURES, CUTLASS["depth"], CUTLASS["min_shapes"])
            fit.merge_alike(tree, lambda leaf: fit.best_of(fit.deltas(leaf.items))[0])
            for path, leaf in tree.leaves():
                action, _ = fit.best_of(fit.deltas(leaf.items))
                if not action:
                    continue
                n = len(leaf.items)
                g = math.exp(sum(it.vals.get(action, it.miss) for it in leaf.items) / n)
                best = math.exp(sum(min(it.vals.values(), default=it.miss) for it in leaf.items) / n)
                rules.append(emit.Rule(fit.box_of(cell_path(cell) + path), rng, action,
                                       f"fitted on {n} points ({len({it.shape for it in leaf.items})} shapes): "
                                       f"{g:.3f} of the best there, the best CUTLASS config {best:.3f}"))
    return rules


def cutlass_picks(rules, items):
    """{id(point): CUTLASS's default there under `rules`} (None: no rule covers it, and CUTLASS's
    own list answers, which the data need not have timed)."""
    out = {}
    for it in items:
        r = emit.first_rule(rules, it.point)
        out[id(it.point)] = r.action if r else None
    return out


def out_of_fold(tool, sm_items, cl_items, train_shapes):
    """Stage 1 and 2's choice at every training point by rules fitted without that point's shape
    (FOLDS folds of the training shapes): what the selector learns from, so that it trusts a
    backend's default only where the default carries over to shapes it was not fitted on."""
    shapes = sorted(train_shapes)
    sm, cl = {}, {}
    for i in range(FOLDS):
        held = set(shapes[i::FOLDS])
        rest = train_shapes - held
        sm_part = [it for it in sm_items if it.shape in held]
        cl_part = [it for it in cl_items if it.shape in held]
        sm.update(small_m_picks(tool, small_m_rules(sm_items, rest), sm_part))
        cl.update(cutlass_picks(cutlass_rules(cl_items, rest), cl_part))
    return sm, cl


def dense_actions(points):
    """The tactics the selector may name outright: those every benchmark timed wherever they can
    run (CUTLASS's list and the --add-tactic names), so that a point without a time for one is a
    point where it falls back to the floor."""
    out = set()
    for p in points:
        if p.dense:
            out.update(t for t in p.times if t.startswith("cutlass:") or t in p.extra["named"])
    return out


def selector_stage(points, train_shapes, sm, cl):
    """Stage 3: per leaf, the backend default or dense action that beats the floor by MARGIN, else
    the floor; the defaults' choices at each point are sm and cl ({id(point): tactic}). Where the
    benchmarks cover an M range the range is fitted on their points alone."""
    named = dense_actions([p for p in points if p.shape in train_shapes])
    items = {}
    for p in points:
        vals = {}
        for action, chosen in (("small_m:default", sm.get(id(p))), ("cutlass:default", cl.get(id(p)))):
            if chosen and chosen in p.times:
                vals[action] = math.log(p.times[chosen] / p.floor_us())
        if p.dense:
            for t in named & p.times.keys():
                vals[t] = math.log(p.times[t] / p.floor_us())
        items[id(p)] = fit.Item(p, vals, 0.0)
    rules = []
    for cell in SELECTOR_CELLS:
        for rng in M_RANGES:
            train = [items[id(p)] for p in points if in_cell(p, cell) and m_range(p.m) == rng and
                     p.shape in train_shapes]
            if rng[0] > 32 and any(it.point.dense for it in train):
                train = [it for it in train if it.point.dense]
            shapes = len({it.shape for it in train})
            if shapes < SELECTOR["min_shapes"]:
                continue
            tree = fit.grow(train, SELECTOR_FEATURES, SELECTOR["depth"], SELECTOR["min_shapes"])
            fit.merge_alike(tree, accepted)
            for path, leaf in tree.leaves():
                n = len(leaf.items)
                leaf_shapes = len({it.shape for it in leaf.items})
                action, delta = fit.best_of(fit.deltas(leaf.items))
                if accepted(leaf) != "cublaslt:default":
                    rules.append(emit.Rule(fit.box_of(cell_path(cell) + path), rng, action,
                                           f"fitted on {n} points ({leaf_shapes} shapes): "
                                           f"{math.exp(delta / n):.3f} of the floor"))
                else:
                    rules.append(emit.Rule(fit.box_of(cell_path(cell) + path), rng, "cublaslt:default",
                                           f"the floor: no backend's default beat it by {MARGIN:.0%} on {n} points "
                                           f"({leaf_shapes} shapes)"))
    return rules


def accepted(leaf):
    """A selector leaf's action: the backend default of lowest cost where it beats the floor by
    MARGIN (geomean) and on CONSISTENT of the leaf's shapes, else the floor."""
    action, delta = fit.best_of(fit.deltas(leaf.items))
    if action and delta / len(leaf.items) < math.log(1 - MARGIN) and consistent(leaf.items, action):
        return action
    return "cublaslt:default"


def consistent(items, action):
    """Whether `action` is faster than the floor on at least CONSISTENT of the items' shapes (each
    shape's geomean): a leaf whose gain comes from a few shapes keeps the floor."""
    by = {}
    for it in items:
        by.setdefault(it.shape, []).append(it.vals.get(action, it.miss))
    wins = sum(sum(v) / len(v) < 0 for v in by.values())
    return wins >= CONSISTENT * len(by)


def fit_all(tool, points, sm_items, cl_items, train_shapes):
    """The three stages fitted on train_shapes; every point's small_m and CUTLASS choice under the
    fitted rules lands in point.extra."""
    sm_oof, cl_oof = out_of_fold(tool, sm_items, cl_items, train_shapes)
    small_m = small_m_rules(sm_items, train_shapes)
    cutlass = cutlass_rules(cl_items, train_shapes)
    sm_final, cl_final = small_m_picks(tool, small_m, sm_items), cutlass_picks(cutlass, cl_items)
    selector = selector_stage(points, train_shapes, sm_oof, cl_oof)
    for p in points:
        p.extra["small_m"], p.extra["cutlass"] = sm_final.get(id(p)), cl_final.get(id(p))
    return small_m, cutlass, selector


def cross_validate(tool, points, sm_items, cl_items, train_shapes):
    """--cv: the whole fit's geomean (auto / best, the held-out rule of the report) over FOLDS
    folds of the training shapes, for each setting of GRID; the constants above are its choice."""
    shapes = sorted(train_shapes)
    for setting in CV_GRID:
        for group, values in setting.items():
            globals()[group].update(values)
        logs = []
        for i in range(FOLDS):
            held = set(shapes[i::FOLDS])
            _, _, selector = fit_all(tool, points, sm_items, cl_items, train_shapes - held)
            for p in points:
                if p.shape in held and not (p.source.startswith("h200_tune_all") or p.source.startswith("h200_tune_m1")):
                    t, _ = emit.chosen(p, selector, [], False)
                    logs.append(math.log((p.times[t] if t in p.times else p.floor_us()) / p.best))
        print(f"{setting}: {math.exp(sum(logs) / len(logs)):.4f} over {len(logs)} points", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, help="fp8gemm_small_m_recipes (built by the tests' build)")
    ap.add_argument("--write", action="store_true", help="write the generated files")
    ap.add_argument("--verbose", action="store_true", help="also check each selector rule on the held-out shapes")
    ap.add_argument("--cv", action="store_true", help="cross-validate the tree sizes on the training shapes")
    ap.add_argument("--out", default=ROOT, help="the tree to write them into (default: this repository)")
    args = ap.parse_args()
    tool = RecipeTool(args.tool, SMS)
    points = load(tool)
    held_out = set(read_shapes(os.path.join(DATA, VALIDATION)))
    suite = {p.shape for p in points if p.source.startswith("h200_tune_all") or p.source.startswith("h200_tune_m1")}
    train_shapes = {p.shape for p in points} - held_out
    sm_items, cl_items = small_m_items(tool, points), cutlass_items(points)
    if args.cv:
        cross_validate(tool, points, sm_items, cl_items, train_shapes)
        return
    small_m, cutlass, selector = fit_all(tool, points, sm_items, cl_items, train_shapes)
    table = emit.read_table(os.path.join(ROOT, "src", "core", "tables", "sm90", "exact_table.inc"))
    print(emit.report(points, held_out, suite, selector, table, MARGIN))
    if args.verbose:
        print(emit.rule_check(points, held_out, selector))
    print(f"rules: small_m {len(small_m)}, cutlass {len(cutlass)}, selector {len(selector)} "
          f"({sum(r.action != 'cublaslt:default' for r in selector)} not the floor)")
    if args.write:
        sources = ", ".join(SUITE + WIDE + DENSE) + "; held out: " + VALIDATION
        emit.write_all(args.out, sources, small_m, cutlass, selector)


if __name__ == "__main__":
    main()
