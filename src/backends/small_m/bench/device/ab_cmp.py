#!/usr/bin/env python3
"""Compare two sets of `fp8gemm bench --json` runs of the same points (A = old, B = new):
per weight class, geomean of B/A for the best small_m tactic and for every small_m tactic timed
in both (split-K ones apart), and the HBM fractions of the best tactic (4.5 TB/s floor).
Usage: ab_cmp.py A1.json[,A2.json] B1.json[,B2.json]"""
import json, math, sys, re, collections
HBM = 4.5e12
def load(arg):
    pts = collections.defaultdict(list)
    for f in arg.split(","):
        for p in json.load(open(f))["points"]:
            pts[(p["shape"], p["M"])].append(p)
    return pts
def gm(x): return math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")
def times(ps):
    t = collections.defaultdict(list)
    for p in ps:
        for x in p["timings"]:
            if x["ok"] and len(x["samples_us"]) > 1 and x["tactic"].startswith("small_m:"):
                t[x["tactic"]].append(x["median_us"])
    return {k: min(v) for k, v in t.items()}
def ref(ps):
    v = [e["us"] for p in ps for e in p["entries"] if e["label"] == "cublaslt_default" and e.get("ok")]
    return min(v) if v else float("nan")
A, B = load(sys.argv[1]), load(sys.argv[2])
cls = lambda mb: ">=64MB" if mb >= 64 else "32-64MB" if mb >= 32 else "16-32MB" if mb >= 16 else "<16MB"
agg = collections.defaultdict(lambda: collections.defaultdict(list))
rows = []
for key in sorted(set(A) & set(B)):
    p = A[key][0]; M, N, K, b = p["M"], p["N"], p["K"], p["batch"]
    mb = N * K * b / 1e6; c = cls(mb)
    ta, tb = times(A[key]), times(B[key])
    if not ta or not tb: continue
    floor = b * (N * K + M * K + 2 * M * N) / HBM * 1e6
    ba, bb = min(ta.values()), min(tb.values())
    agg[c]["best"].append(bb / ba); agg["all"]["best"].append(bb / ba)
    agg[c]["hbmA"].append(floor / ba); agg[c]["hbmB"].append(floor / bb)
    agg[c]["xA"].append(ref(A[key]) / ba); agg[c]["xB"].append(ref(B[key]) / bb)
    for t in set(ta) & set(tb):
        sk = int(re.search(r"splitk=(\d+)", t).group(1))
        agg[c]["split" if sk > 1 else "nosplit"].append(tb[t] / ta[t])
    rows.append((key, mb, floor / ba, floor / bb, bb / ba, min(tb, key=tb.get)))
print(f"{'class':9} {'pts':>4} {'best B/A':>9} {'splitK B/A':>10} {'nosplit B/A':>11} {'HBM A med':>9} {'HBM B med':>9} {'A>=thr':>6} {'B>=thr':>6} {'xA':>6} {'xB':>6}")
for c in ["<16MB", "16-32MB", "32-64MB", ">=64MB", "all"]:
    g = agg.get(c)
    if not g: continue
    thr = 0.9 if c == ">=64MB" else 0.7
    med = lambda x: sorted(x)[len(x) // 2] if x else float("nan")
    print(f"{c:9} {len(g['best']):4} {gm(g['best']):9.3f} {gm(g['split']):10.3f} {gm(g['nosplit']):11.3f} {med(g['hbmA']):9.2f} {med(g['hbmB']):9.2f} "
          f"{sum(x >= thr for x in g['hbmA']):6} {sum(x >= thr for x in g['hbmB']):6} {gm(g['xA']):6.3f} {gm(g['xB']):6.3f}")
allxA = [x for c in agg if c != "all" for x in agg[c]["xA"]]; allxB = [x for c in agg if c != "all" for x in agg[c]["xB"]]
print(f"best small_m / cuBLASLt default, geomean: A {gm(allxA):.3f}  B {gm(allxB):.3f}")
if "-v" in sys.argv:
    for (s, M), mb, ha, hb, r, t in rows: print(f"{s:28} M={M:<3} {mb:6.1f}MB HBM {ha:.2f} -> {hb:.2f} ({r:.3f}) {t}")
