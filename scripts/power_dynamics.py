# Power/clock dynamics of a sustained FP8 GEMM (torch._scaled_mm) on this GPU: per-call time vs
# time under load, and how fast the boost comes back after an idle gap (docs/tuning.md "Power
# and clocks"). Usage: python3 scripts/power_dynamics.py M N K out.json
import time, json, sys, torch
torch.manual_seed(0)
M, N, K = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
dev = 'cuda'
x = (torch.rand(M, K, device=dev) * 2 - 1).to(torch.float8_e4m3fn)
ws = [(torch.rand(N, K, device=dev) * 2 - 1).to(torch.float8_e4m3fn) for _ in range(3)]
one = torch.ones((), device=dev)
def call(i): return torch._scaled_mm(x, ws[i % 3].t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
for i in range(3): call(i)
torch.cuda.synchronize()
def run(seconds, every=1):
    evs = []; t0 = time.perf_counter(); i = 0
    while time.perf_counter() - t0 < seconds:
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); call(i); b.record(); evs.append((time.perf_counter() - t0, a, b)); i += 1
        if i % 64 == 0: torch.cuda.synchronize()
    torch.cuda.synchronize()
    return [(round(t, 4), round(a.elapsed_time(b) * 1000, 1)) for t, a, b in evs]
out = {'shape': [M, N, K]}
time.sleep(2)
out['cold_3s'] = run(3.0)
for gap in [0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0]:
    run(1.0)  # hot again
    time.sleep(gap)
    out['gap_%g' % gap] = run(0.6)
json.dump(out, open(sys.argv[4], 'w'))
def summ(s, label):
    us = [u for _, u in s]; ts = [t for t, _ in s]
    import statistics
    first = statistics.median(us[:20]); last = statistics.median(us[-50:])
    slow = next((t for t, u in s if u > first * 1.04), None)
    print('%-10s n=%4d first20 %.1f us  last50 %.1f us  ratio %.3f  first slow at %s s' % (label, len(us), first, last, last / first, slow))
for k, v in out.items():
    if k != 'shape': summ(v, k)
