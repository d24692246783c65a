"""The rules of tools/tables/fit_default_rules.py: their boxes, the C++ files they are written to,
and the offline report of what untuned auto would run."""
import math
import os
import re

COMMAND = "python3 tools/tables/fit_default_rules.py --tool build/tools/tables/fp8gemm_small_m_recipes --write"
MIB = 1 << 20


class Rule:
    """box = {feature: (lo, hi)} (inclusive integer bounds, None = open; k128 is 1 where k % 128 == 0),
    within the M range rng; action = what the rule names, evidence = one sentence."""

    def __init__(self, box, rng, action, evidence):
        self.action, self.evidence = action, evidence
        m_lo, m_hi = box.get("m", (None, None))
        self.m = (max(rng[0], m_lo or rng[0]), min(rng[1], m_hi if m_hi is not None else rng[1]))
        self.box = {f: b for f, b in box.items() if f != "m"}

    def contains(self, p):
        if not self.m[0] <= p.m <= self.m[1]:
            return False
        for f, (lo, hi) in self.box.items():
            v = p.feat[f]
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                return False
        return True

    def describe(self):
        return f"m {self.m[0]}..{self.m[1]} " + ", ".join(f"{f} {lo}..{hi}" for f, (lo, hi) in self.box.items())

    def cpp_box(self):
        s = f"ShapeBox().m({self.m[0]}, {self.m[1]})"
        lo, hi = self.box.get("batch", (1, None))
        s += f".batch({lo or 1}, {hi if hi is not None else 'ShapeBox::kAny'})"
        lo, hi = self.box.get("k128", (None, None))
        allowed = [v for v in (0, 1) if (lo is None or v >= lo) and (hi is None or v <= hi)]
        if len(allowed) == 1:
            s += f".k_multiple_of(128, {'true' if allowed[0] else 'false'})"
        lo, hi = self.box.get("rows_per_sm", (None, None))
        if lo is not None or hi is not None:
            s += f".rows_per_sm({lo or 1}, {hi if hi is not None and hi < 1 << 40 else 'ShapeBox::kAny'})"
        for f in ("n", "k", "weight"):
            lo, hi = self.box.get(f, (None, None))
            if lo is not None:
                s += f".{f}_at_least({value(f, lo)})"
            if hi is not None:
                s += f".{f}_below({value(f, hi + 1)})"
        return s


def value(feature, v):
    if feature == "weight" and v % MIB == 0:
        return f"{v // MIB} * ShapeBox::kMiB"
    return str(v)


def first_rule(rules, p):
    for r in rules:
        if r.contains(p):
            return r
    return None


def read_table(path):
    """The exact-shape rules of src/core/tables/sm90/exact_table.inc: [(batch, n, k, m_lo, m_hi, tactic)]."""
    with open(path) as f:
        text = f.read()
    pat = r'\{D::kE4M3, D::kE4M3, D::kBF16, (\d+), (\d+), (\d+), (\d+), (\d+),\s*"([^"]+)"\}'
    return [(int(b), int(n), int(k), int(lo), int(hi), t) for b, n, k, lo, hi, t in re.findall(pat, text)]


def table_choice(table, p):
    for b, n, k, lo, hi, t in table:
        if (b, n, k) == (p.batch, p.n, p.k) and lo <= p.m <= hi:
            return t
    return None


def chosen(p, selector_rules, table, use_table):
    """(tactic, where from) that untuned auto runs at p; tactic None = the floor."""
    if use_table:
        t = table_choice(table, p)
        if t:
            return (None if t == "cublaslt:heuristic" else t), "table"
    r = first_rule(selector_rules, p)
    if not r or r.action == "cublaslt:default":
        return None, "floor"
    if r.action == "small_m:default":
        return p.extra.get("small_m"), "small_m"
    if r.action == "cutlass:default":
        return p.extra.get("cutlass"), "cutlass"
    return r.action, "tactic"


def summary(ratios):
    if not ratios:
        return "     -"
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    within = sum(r <= 1.05 for r in ratios) / len(ratios)
    return f"{g:6.3f} {within:6.0%} {max(ratios):6.2f}"


def report(points, held_out, suite, selector_rules, table, margin):
    lines = ["untuned auto / best timed tactic, offline from the tunes' times (geomean, share <= 1.05, max);",
             "'unmeasured': auto's tactic has no time at a tune's point and is counted at the floor's",
             "(at a benchmark's point a tactic without a time cannot run there: the floor runs);",
             "'short': the best is a short-round time (pruned candidates; noisier, biased low as a minimum)", ""]
    head = f"{'shapes':<10} {'M':>11} {'points':>6} | {'auto':>6} {'<=1.05':>6} {'max':>6} | " \
           f"{'floor':>6} {'<=1.05':>6} {'max':>6} | {'today':>6} {'<=1.05':>6} {'max':>6} | unmeasured short"
    lines += [head, "-" * len(head)]
    groups = [("held out", lambda p: p.shape in held_out, False), ("suite", lambda p: p.shape in suite, True)]
    ranges = [(1, 32), (33, 64), (65, 256), (257, 2048), (2049, 16384), (1, 16384)]
    for name, member, use_table in groups:
        for lo, hi in ranges:
            pts = [p for p in points if member(p) and lo <= p.m <= hi]
            if not pts:
                continue
            auto, floor, today, unmeasured, short = [], [], [], 0, 0
            for p in pts:
                f = p.floor_us() / p.best
                floor.append(f)
                t, _ = chosen(p, selector_rules, table, use_table)
                if t is not None and t not in p.times and not p.dense:  # a benchmark timed all that can run
                    unmeasured += 1
                auto.append(p.times[t] / p.best if t in p.times else f)
                t0 = table_choice(table, p) if use_table else None
                today.append(p.times[t0] / p.best if t0 in p.times else f)
                short += p.kinds[min(p.times, key=p.times.get)] == "short"
            label = f"{lo}..{hi}" if (lo, hi) != (1, 16384) else "all"
            lines.append(f"{name:<10} {label:>11} {len(pts):>6} | {summary(auto)} | {summary(floor)} | "
                         f"{summary(today)} | {unmeasured:>10} {short:>5}")
        lines.append("")
    return "\n".join(lines)


def header(what, sources):
    return (f"// {what} GENERATED by tools/tables/fit_default_rules.py from\n"
            f"// {sources}.\n"
            f"// Regenerate rather than edit: {COMMAND}\n")


def cpp_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rule_lines(rules, action):
    out = []
    for r in rules:
        out.append(f"{{{r.cpp_box()},\n {cpp_string(action(r))},\n {cpp_string(r.evidence)}}},")
    return out


def write_all(root, sources, small_m_rules, cutlass_rules, selector_rules):
    """The three rule tables, beside the exact table in src/core/tables/sm90 (core/decision_tables.h)."""
    tables = os.path.join(root, "src", "core", "tables", "sm90")
    small_m = header("small_m's default rules on sm_90 (core/decision_tables.h: small_m).", sources) + \
        "// {box, recipes: the first whose config is one of small_m's candidates for the problem runs, evidence}\n" + \
        "\n".join(rule_lines(small_m_rules, lambda r: r.action)) + "\n"
    write(os.path.join(tables, "small_m_rules.inc"), small_m)
    cutlass = header("CUTLASS's default rules on sm_90 (core/decision_tables.h: cutlass).", sources) + \
        "// {box, config, evidence}\n" + \
        "\n".join(rule_lines(cutlass_rules, lambda r: r.action[len("cutlass:"):])) + "\n"
    write(os.path.join(tables, "cutlass_rules.inc"), cutlass)
    selector = header("Hopper's selector rules: which backend's default `auto` runs untuned, by shape "
                      "(core/decision_tables.h: selector).", sources) + \
        "// A problem no rule covers, or whose rule's tactic cannot run it, gets the floor.\n" + \
        "// {box, \"<backend>:default\", \"cublaslt:default\" (the floor) or a tactic, evidence}\n" + \
        "\n".join(rule_lines(selector_rules, lambda r: r.action)) + "\n"
    write(os.path.join(tables, "selector_rules.inc"), selector)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def rule_check(points, held_out, rules):
    """Per rule that is not the floor: its points held out and what it gave them against the floor."""
    lines = ["selector rules on the held-out shapes (geomean of auto / floor, unmeasured counted at the floor):"]
    for i, r in enumerate(rules):
        if r.action == "cublaslt:default":
            continue
        pts = [p for p in points if p.shape in held_out and r.contains(p)]
        ratios = []
        for p in pts:
            t = p.extra.get("small_m" if r.action == "small_m:default" else "cutlass") \
                if r.action.endswith(":default") else r.action
            ratios.append(p.times[t] / p.floor_us() if t in p.times else 1.0)
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else float("nan")
        lines.append(f"  {i:3d} {r.describe()} -> {r.action}: {len(pts)} points, {g:.3f}"
                     f"  ({r.evidence})")
    return "\n".join(lines)
