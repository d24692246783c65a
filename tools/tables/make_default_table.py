#!/usr/bin/env python3
"""Turn `fp8gemm tune --json` output into the built-in default table (src/core/tables/sm90/exact_table.inc).

Usage (after a tuning run on the H200, with an EMPTY table in the binary so that every
decision's default is cuBLASLt's heuristic, the floor):

    fp8gemm tune --model all --m buckets --cache /tmp/c.json --json tune.json
    python3 tools/tables/make_default_table.py tune.json [more.json ...] \
        --out src/core/tables/sm90/exact_table.inc

Use a fresh --cache (or --retune): keys answered from an existing cache carry no measurement
and are skipped.

A rule covers an M range [m_lo, m_hi]: each measured decision gives one range per segment of
its bucket (the bucket's lower edge + 1, or the previous segment's m_max + 1, up to the
segment's m_max; a decision without segments covers its whole bucket). A range is emitted where
its choice differs from the floor, and wherever the bucket was timed at M values below the edge
(sampled_ms): the floor is cuBLASLt's heuristic answer at each M, which below the edge is
another tactic than the one measured. Consecutive ranges of one shape class with the same
choice are merged; an untuned bucket between two ranges is covered only when they merge.
Several input files are allowed; for a key present in more than one, the last file wins, and
FILE:m<=N takes only the keys of M buckets <= N from FILE (FILE:m>N those above N). That is how a
tune of a changed M range replaces just that range; the committed table is made so (its rules at
M <= 32 from two empty-table tunes of that range, those above from a whole-suite one):

    python3 tools/tables/make_default_table.py data/tables/sm90/h200_tune_all_buckets.json.gz:m>32 \
        data/tables/sm90/h200_tune_m1-32_a.json.gz+data/tables/sm90/h200_tune_m1-32_b.json.gz

A+B (two or more tunes of the same code joined by '+', with one filter for all) takes, key by
key, the decision whose key measured the lower noise: one tune inherits its noisy keys, where a
challenger needed a win of twice the noise (a key at 6.7% noise can keep a tile far from the
best); two tunes rarely share them.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from default_rules_data import read_json  # noqa: E402  the tunes' JSON, names as printed now

EDGES = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
         6144, 8192, 12288, 16384]  # m_bucket_edges() in src/tune/keys/tune_key.cpp
DTYPES = {"e4m3": "D::kE4M3", "e5m2": "D::kE5M2", "bf16": "D::kBF16", "fp16": "D::kFP16"}
BEGIN = "      // BEGIN GENERATED RULES"
END = "      // END GENERATED RULES"


# Tactics that run the floor's own choice at each M (Backend::adaptive_default).
ADAPTIVE_FLOORS = {"cublaslt:heuristic"}


def split_limit(arg):
    """'tune.json' -> (['tune.json'], accept all); 'a.json+b.json:m<=16' -> (['a.json', 'b.json'], M buckets
    <= 16 only); ':m>32': M buckets above 32 only."""
    m = re.fullmatch(r"(.+):m(<=|>)(\d+)", arg)
    if not m:
        return arg.split("+"), lambda bucket: True
    n = int(m.group(3))
    return m.group(1).split("+"), (lambda bucket: bucket <= n) if m.group(2) == "<=" else (lambda bucket: bucket > n)


def read_tune(path):
    doc = read_json(path)
    dev = doc.get("device", {})
    if dev.get("compute_capability") not in (None, 90):
        sys.exit(f"{path}: compute capability {dev.get('compute_capability')}, this table is for sm_90")
    return dev, doc["decisions"]


def quieter(d, e):
    """Of two decisions of one key, the measured one, or the one whose key measured less noise."""
    if d.get("measured") != e.get("measured"):
        return d if d.get("measured") else e
    return e if e.get("noise", 1.0) < d.get("noise", 1.0) else d


def load_decisions(paths):
    by_key = {}
    device = None
    for arg in paths:
        files, accept = split_limit(arg)
        group = {}
        for path in files:
            dev, decisions = read_tune(path)
            device = device or dev
            for d in decisions:
                if accept(d["m_bucket"]):
                    group[d["key"]] = quieter(group[d["key"]], d) if d["key"] in group else d
        by_key.update(group)
    return device, list(by_key.values())


def shape_class(d):
    return (d["a"], d["b"], d["out"], d["batch"], d["n"], d["k"])


def bucket_lower(edge):
    """The largest M of the bucket below `edge` (0 for the first)."""
    if edge > EDGES[-1]:
        return edge // 2
    below = [e for e in EDGES if e < edge]
    return below[-1] if below else 0


def ranges_of(d):
    """[(m_lo, m_hi, tactic)] of one decision: one per segment, or the whole bucket."""
    segments = d.get("segments") or [{"m_max": d["m_bucket"], "tactic": d["choice"]}]
    out, lo = [], bucket_lower(d["m_bucket"]) + 1
    for s in segments:
        out.append((lo, s["m_max"], s["tactic"]))
        lo = s["m_max"] + 1
    return out


def make_rules(decisions):
    """[(shape class, m_lo, m_hi, tactic)], merging consecutive ranges with the same choice."""
    by_class = {}
    for d in decisions:
        if not d.get("measured"):
            continue  # nothing was timed (budget spent): no evidence for a rule
        by_class.setdefault(shape_class(d), []).append(d)
    rules = []
    for cls in sorted(by_class):
        run = None  # [m_lo, m_hi, tactic]
        for d in sorted(by_class[cls], key=lambda d: d["m_bucket"]):
            # The floor is cuBLASLt's heuristic at each M, a different tactic at other M of the
            # bucket; a choice timed over the bucket (sampled_ms) is stored even where it equals
            # the floor at the edge, as the tuned cache stores it.
            bucket_wide = bool(d.get("sampled_ms"))
            for lo, hi, choice in ranges_of(d):
                # The adaptive floor is what an M without a rule runs anyway: no rule.
                adaptive = choice in ADAPTIVE_FLOORS
                tactic = choice if not adaptive and (choice != d["floor"] or bucket_wide) else None
                if run and tactic == run[2]:
                    run[1] = hi
                    continue
                if run and run[2]:
                    rules.append((cls, *run))
                run = [lo, hi, tactic]
        if run and run[2]:
            rules.append((cls, *run))
    return rules


def cpp_rule(rule):
    (a, b, out, batch, n, k), m_lo, m_hi, tactic = rule
    if '"' in tactic or "\\" in tactic:
        sys.exit(f"tactic name {tactic!r} cannot be a C++ string literal as is")
    return (f"      {{{DTYPES[a]}, {DTYPES[b]}, {DTYPES[out]}, {batch}, {n}, {k}, {m_lo}, {m_hi},\n"
            f"       \"{tactic}\"}},")


def render(template, rules, device, sources):
    start, stop = template.find(BEGIN), template.find(END)
    if start < 0 or stop < 0:
        sys.exit("the output file has no BEGIN/END GENERATED RULES markers")
    header = (f"{BEGIN}\n      // {len(rules)} rules from {', '.join(sources)}\n"
              f"      // measured on {device.get('name', '?')} ({device.get('sm_count', '?')} SMs, driver "
              f"{device.get('driver_version', '?')}, cuBLASLt {device.get('cublaslt_version', '?')})\n")
    body = "\n".join(cpp_rule(r) for r in rules)
    return template[:start] + header + body + ("\n" if body else "") + template[stop:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="output of `fp8gemm tune --json` (.json or .json.gz); FILE:m<=N reads "
                    "only the keys of M buckets <= N from FILE, FILE:m>N those above N (the last source naming a "
                    "key wins); A+B[:filter]: per key the decision of the tune with the lower noise")
    ap.add_argument("--out", default="src/core/tables/sm90/exact_table.inc", help="table file to rewrite")
    ap.add_argument("--print", action="store_true", help="print the rules instead of rewriting --out")
    args = ap.parse_args()
    device, decisions = load_decisions(args.json)
    rules = make_rules(decisions)
    if args.print:
        for r in rules:
            print(cpp_rule(r))
        return
    with open(args.out) as f:
        template = f.read()
    text = render(template, rules, device or {}, args.json)
    with open(args.out, "w") as f:
        f.write(text)
    moved = sum(1 for d in decisions if d.get("measured") and d["choice"] not in (d["floor"], *ADAPTIVE_FLOORS))
    print(f"{args.out}: {len(rules)} rules ({moved} of {len(decisions)} keys beat the cuBLASLt floor)")


if __name__ == "__main__":
    main()
