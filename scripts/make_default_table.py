#!/usr/bin/env python3
"""Turn `fp8gemm tune --json` output into the built-in default table (src/tune/default_table_sm90.cpp).

Usage (after a tuning run on the H200, with an EMPTY table in the binary so that every
decision's default is cuBLASLt's heuristic, the floor):

    fp8gemm tune --model all --m suite --cache /tmp/c.json --json tune.json
    python3 scripts/make_default_table.py tune.json [more.json ...] \
        --out src/tune/default_table_sm90.cpp

Use a fresh --cache (or --retune): keys answered from an existing cache carry no measurement
and are skipped.

A rule is emitted where the measured choice differs from the floor, and where it was timed over
the whole M bucket (the decision's sampled_ms): the floor is cuBLASLt's heuristic answer at each
M, which below the edge is another tactic than the one measured. Consecutive M buckets of one
shape class with the same choice are merged into one M range. Several input files are allowed;
for a key present in more than one, the last file wins.
"""
import argparse
import json
import re
import sys

DTYPES = {"e4m3": "D::kE4M3", "e5m2": "D::kE5M2", "bf16": "D::kBF16", "fp16": "D::kFP16"}
BEGIN = "      // BEGIN GENERATED RULES"
END = "      // END GENERATED RULES"


def load_decisions(paths):
    by_key = {}
    device = None
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        dev = doc.get("device", {})
        if dev.get("compute_capability") not in (None, 90):
            sys.exit(f"{path}: compute capability {dev.get('compute_capability')}, this table is for sm_90")
        device = device or dev
        for d in doc["decisions"]:
            by_key[d["key"]] = d
    return device, list(by_key.values())


def shape_class(d):
    return (d["a"], d["b"], d["out"], d["batch"], d["n"], d["k"])


def make_rules(decisions):
    """[(shape class, m_lo, m_hi, tactic)], merging consecutive buckets with the same choice."""
    by_class = {}
    for d in decisions:
        if not d.get("measured"):
            continue  # nothing was timed (budget spent): no evidence for a rule
        by_class.setdefault(shape_class(d), []).append(d)
    rules = []
    for cls in sorted(by_class):
        ds = sorted(by_class[cls], key=lambda d: d["m_bucket"])
        run = None  # [m_lo, m_hi, tactic]
        for d in ds:
            # The floor is cuBLASLt's heuristic at each M, a different tactic at other M of the
            # bucket; a choice timed over the bucket (sampled_ms) is stored even where it equals
            # the floor at the edge, as the tuned cache stores it.
            bucket_wide = bool(d.get("sampled_ms"))
            tactic = d["choice"] if d["choice"] != d["floor"] or bucket_wide else None
            if run and tactic == run[2]:
                run[1] = d["m_bucket"]
                continue
            if run and run[2]:
                rules.append((cls, *run))
            run = [d["m_bucket"], d["m_bucket"], tactic]
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
    ap.add_argument("json", nargs="+", help="output of `fp8gemm tune --json`")
    ap.add_argument("--out", default="src/tune/default_table_sm90.cpp", help="table source to rewrite")
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
    moved = sum(1 for d in decisions if d.get("measured") and d["choice"] != d["floor"])
    print(f"{args.out}: {len(rules)} rules ({moved} of {len(decisions)} keys beat the cuBLASLt floor)")


if __name__ == "__main__":
    main()
