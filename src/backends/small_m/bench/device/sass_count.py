# Opcode counts per small_m kernel family in `cuobjdump -sass` output (persistent v3, v3 with
# weights in registers / by cp.async, v3, v2).
import re, sys, collections
fam = collections.defaultdict(collections.Counter)
nfun = collections.Counter()
cur = None
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Function : (\S+)", line)
    if m:
        n = m.group(1)
        cur = ("persist" if "persistent_kernel" in n else "reg" if "wgmma_reg_kernel" in n
               else "cp" if "wgmma_cp_kernel" in n else "v3" if "small_m_wgmma_kernel" in n
               else "v2" if "small_m" in n else None)
        if cur: nfun[cur] += 1
        continue
    if not cur: continue
    m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", line)
    if m: fam[cur][m.group(1)] += 1
keys = ("QGMMA", "HGMMA", "HMMA", "UTMALDG", "UTMAPF", "LDG", "STG", "LDS", "STS", "LDL", "STL", "SYNCS", "WARPGROUP", "F2FP", "BPT")
for f in ("persist", "reg", "cp", "v3", "v2"):
    c = fam[f]
    print("%s: %d functions" % (f, nfun[f]))
    for op, k in sorted(c.items()):
        if op.startswith(keys): print("   %6d %s" % (k, op))
