#!/usr/bin/env python3
"""The power-state pass's rounds from `fp8gemm tune --power-states --json` (docs/tuning.md "Both
power states"): one CSV row per timed contender, with its time where its segment was decided
(unloaded), its time under the heavy load, the loaded round's SM clock when recorded
(FP8GEMM_RECORD_CLOCK=1) and whether it is the segment's tactic after the pass.

    scripts/power_states_from_tune.py tune.json > power_states.csv
"""
import csv
import json
import re
import sys

NOTE = re.compile(r"under a heavy load: ([\d.]+) us(?: at (\d+) MHz)?")


def main():
    decisions = json.load(open(sys.argv[1]))["decisions"]
    out = csv.writer(sys.stdout)
    out.writerow(["n", "k", "m_bucket", "segment_m_max", "sampled_m", "tactic", "unloaded_us", "loaded_us",
                  "loaded_clock_mhz", "segment_tactic"])
    for d in decisions:
        for s in d["segments"]:
            rows = d["candidates"] if s["sampled_m"] == d["m_bucket"] else s.get("candidates", [])
            for c in rows:
                m = NOTE.search(c.get("note", ""))
                if m:
                    out.writerow([d["n"], d["k"], d["m_bucket"], s["m_max"], s["sampled_m"], c["tactic"],
                                  round(c["us"], 3), m.group(1), m.group(2) or "", int(c["tactic"] == s["tactic"])])


if __name__ == "__main__":
    main()
