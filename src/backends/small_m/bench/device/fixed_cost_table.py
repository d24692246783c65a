#!/usr/bin/env python3
"""Pivots small_m_fixed_cost's CSV: one line per (shape, config), one column per variant (us)."""
import csv, sys
# "trace|" lines (session 5 timelines) are skipped here: they are read as printed.
rows = [r for r in csv.DictReader((l for l in open(sys.argv[1]) if "|" in l and not l.startswith(("#", "trace|"))), delimiter="|")]
short = {"full": "full", "full,pdl=0": "pdl0", "empty": "empty", "empty,pdl=0": "empty0", "empty,nocluster": "emptyNC",
         "noload": "noload", "noload+noepi": "nl+ne", "noload+noepi,nocluster": "nl+neNC", "tma_stream": "tma",
         "tma_stream,nocluster": "tmaNC", "tma_stream_w": "tmaW", "tma_stream_w,nocluster": "tmaWNC", "noact": "noact",
         "noepi": "noepi", "noepi,nocluster": "noepiNC", "push": "push", "push,pdl=0": "push0", "fixup": "fixup",
         "nowait": "nowait", "latetrig": "late", "push+latetrig": "push+late", "full,l2pf": "l2pf", "push,l2pf": "pushL2", "early": "early", "push+early": "push+ea", "pushwarp": "pushW", "pushwarp,pdl=0": "pushW0", "pushwarp+early": "pushW+e", "nostore": "nostore", "pushwarp,l2pf": "pushWL2", "trace": "trace", "latetrig+trace": "late+tr", "pushwarp+trace": "pushW+tr"}
cols = list(short.values())
groups = {}
for r in rows:
    key = (r["shape"], r["config"])
    groups.setdefault(key, {})[short.get(r["variant"], r["variant"])] = (float(r["us"]), int(r.get("rel_err_1e4", r.get("mismatches"))), float(r["floor_us"]))
print("us per call (graph of 20, median of 11); floor = bytes / 4.5 TB/s; '!' = output off the first small_m output by > 1e-2 (norm-relative; older files: any element off)")
print("%-17s %-26s %s" % ("shape", "config", " ".join("%7s" % c[:7] for c in cols)))
for (sh, cfg), v in groups.items():
    if cfg in ("cublaslt", "ldg", "empty") or "wgmma" in cfg:
        print("%-17s %-26s %s (floor %.2f)" % (sh, cfg[:26], "  ".join("%s %.2f%s" % (k, x[0], "!" if x[1] > 100 else "")
              for k, x in v.items()), list(v.values())[0][2]))
        continue
    cells = []
    for c in cols:
        if c in v:
            cells.append("%6.2f%s" % (v[c][0], "!" if v[c][1] > 100 else " "))
        else:
            cells.append("%7s" % "-")
    print("%-17s %-26s %s" % (sh, cfg[:26], " ".join(cells)))
