# Table from `fp8gemm bench --json`: best tactic of one family (names containing FAMILY, default
# "persist=", e.g. "wload=cp") / best other small_m tactic / best of all vs cuBLASLt default.
# FAMILY "re:REGEX" matches names by regular expression instead, e.g. "re:rows=(?!32,|64,|128,)"
# for the fitted rows.
# Usage: summarize.py [--family TEXT] b1.json [b2.json ...]
import json, math, sys, collections, re
args = sys.argv[1:]
FAM = "persist="
if args[:1] == ["--family"]: FAM, args = args[1], args[2:]
def in_family(name): return bool(re.search(FAM[3:], name)) if FAM.startswith("re:") else FAM in name
d = {"points": []}
for f in args:
    try: d["points"] += json.load(open(f))["points"]
    except Exception as ex: print("cannot read", f, ex)
HBM = 4.5e12
def gm(xs): return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
rows = []
wins = collections.Counter()
for p in d["points"]:
    M, N, K, b = p["M"], p["N"], p["K"], p["batch"]
    e = {x["label"]: x for x in p["entries"]}
    ref = e.get("cublaslt_default", {})
    floor = b * (N * K + M * K + 2 * M * N) / HBM * 1e6
    full = [t for t in p["timings"] if t["ok"] and len(t["samples_us"]) > 1 and t["tactic"].startswith("small_m:")]
    v3 = [t for t in full if in_family(t["tactic"])]
    v2 = [t for t in full if not in_family(t["tactic"])]
    bad = [t["tactic"] + " " + t["error"][:80] for t in p["timings"] if not t["ok"] and t["tactic"].startswith("small_m:")]
    for x in bad[:3]: print("NOT OK", p["shape"], M, x)
    if not ref.get("ok") or not full:
        print("MISSING", p["shape"], M); continue
    best = min(full, key=lambda t: t["median_us"])
    b3 = min(v3, key=lambda t: t["median_us"]) if v3 else None
    b2 = min(v2, key=lambda t: t["median_us"]) if v2 else None
    wins[best["tactic"].replace("small_m:", "")] += 1
    rows.append(dict(shape=p["shape"], M=M, MB=N * K / 1e6, floor=floor, ref=ref["us"], best=best["median_us"],
                     v3=b3["median_us"] if b3 else float("nan"), v2=b2["median_us"] if b2 else float("nan"),
                     tac=best["tactic"].replace("small_m:", ""), t3=b3["tactic"].replace("small_m:", "") if b3 else ""))
print("%-18s %3s %6s %6s %7s %7s %7s %7s %5s %5s %6s  %s" % ("shape", "M", "MB", "floor", "cublas", "best", "pers", "old", "hbm", "hbmF", "x", "best tactic of the family " + FAM))
for r in rows:
    print("%-18s %3d %6.1f %6.2f %7.2f %7.2f %7.2f %7.2f %5.2f %5.2f %6.3f  %s" % (r["shape"], r["M"], r["MB"], r["floor"], r["ref"], r["best"], r["v3"], r["v2"], r["floor"] / r["best"], r["floor"] / r["v3"], r["ref"] / r["best"], r["t3"]))
le16 = [r for r in rows if r["M"] <= 16]
print("geomean x (best small_m) vs cublaslt default, M<=16: %.3f (%d pts)" % (gm([r["ref"] / r["best"] for r in le16]), len(le16)))
v3p = [r for r in le16 if r["v3"] == r["v3"]]
print("geomean x (best of the family only) vs cublaslt default, M<=16: %.3f (%d pts)" % (gm([r["ref"] / r["v3"] for r in v3p]), len(v3p)))
old = [r for r in le16 if r["v2"] == r["v2"]]
print("geomean x (best small_m outside the family) vs cublaslt default, M<=16: %.3f (%d pts)" % (gm([r["ref"] / r["v2"] for r in old]), len(old)))
for m in sorted(set(r["M"] for r in rows)):
    xs = [r for r in rows if r["M"] == m]
    print("  M=%d: geomean x %.3f, family only %.3f, without the family %.3f" % (m, gm([r["ref"] / r["best"] for r in xs]), gm([r["ref"] / r["v3"] for r in xs if r["v3"] == r["v3"]]), gm([r["ref"] / r["v2"] for r in xs if r["v2"] == r["v2"]])))
for name, sel in ((">=64MB", lambda r: r["MB"] >= 64), ("16-32MB", lambda r: 16 <= r["MB"] <= 32), ("16-33.6MB", lambda r: 16 <= r["MB"] <= 33.6), ("<16MB", lambda r: r["MB"] < 16)):
    f = sorted(r["floor"] / r["best"] for r in le16 if sel(r))
    c = sorted(r["ref"] / r["best"] for r in le16 if sel(r))
    if f: print("%s M<=16: hbm min %.2f median %.2f max %.2f; >=0.90: %d, >=0.70: %d; x vs cublas geomean %.3f (%d pts)" % (name, f[0], f[len(f) // 2], f[-1], sum(x >= 0.9 for x in f), sum(x >= 0.7 for x in f), gm(c), len(f)))
    o = sorted(r["floor"] / r["v2"] for r in le16 if sel(r) and r["v2"] == r["v2"])
    if o: print("%s M<=16 without the family: hbm min %.2f median %.2f max %.2f; >=0.90: %d, >=0.70: %d" % (name, o[0], o[len(o) // 2], o[-1], sum(x >= 0.9 for x in o), sum(x >= 0.7 for x in o)))
print("wins:")
for k, v in wins.most_common(25): print("  %3d %s" % (v, k))
