"""The layer benchmark's verdicts on its rows (one per model, M and contender; x_bf16 = bf16 us
per step / contender us): geomeans of x_bf16 per M range, per model and over all models, the
targets the project set, and the plot. Plain Python on rows (dicts), so CSVs from elsewhere
summarize the same way (decode_step.py plot --csv layer.csv)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

RANGES: Tuple[Tuple[str, Callable[[int], bool]], ...] = (
    ("M<=16", lambda m: m <= 16), ("16<M<=256", lambda m: 16 < m <= 256), ("M>=512", lambda m: m >= 512))
# fp8gemm's layer, geomean x bf16 over the models per range.
TARGETS = {"M<=16": 1.8, "16<M<=256": 1.5, "M>=512": 1.6}
FP8GEMM_LAYERS = ("fp8gemm_static", "fp8gemm_dynamic")
# Contenders with the same activation scale mode as each fp8gemm layer (fbgemm's GEMV quantizes
# per row, its own dynamic mode).
SAME_MODE = {"fp8gemm_static": ("torch_fp8_static", "fbgemm_static"),
             "fp8gemm_dynamic": ("torch_fp8_dynamic", "fbgemm_dynamic", "fbgemm_lite", "fbgemm_gemv")}
DYNAMIC_MAX_COST = 1.05  # dynamic us / static us at M <= 16
CEILING_MIN_FRACTION = 0.85  # gemm-alone us / static layer us at M <= 16 (geomean)
MIN_GAP = 0.01  # a difference within max(MIN_GAP, 2 * noise) is not a finding


class Check(NamedTuple):
    name: str
    ok: Optional[bool]  # None: the rows hold nothing to judge
    detail: str


def geomean(values: Iterable[float]) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def range_of(m: int) -> Optional[str]:
    return next((name for name, inside in RANGES if inside(m)), None)


def range_geomeans(rows: Sequence[dict]) -> Dict[str, Dict[str, Tuple[float, int]]]:
    """{contender: {range: (geomean x_bf16, points)}} of the rows given."""
    buckets = defaultdict(lambda: defaultdict(list))
    for r in rows:
        name = range_of(r["M"])
        if name:
            buckets[r["contender"]][name].append(r["x_bf16"])
    return {c: {name: (geomean(v), len(v)) for name, v in per.items()} for c, per in buckets.items()}


def _points(rows: Sequence[dict]) -> Dict[Tuple[str, int], Dict[str, dict]]:
    """{(model, M): {contender: row}}."""
    out = defaultdict(dict)
    for r in rows:
        out[(r["model"], r["M"])][r["contender"]] = r
    return out


def _where(items: Sequence[str], limit: int = 8) -> str:
    return ", ".join(items[:limit]) + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _gap(noise: float) -> float:
    return max(MIN_GAP, 2 * noise)


def check_targets(rows: Sequence[dict]) -> List[Check]:
    means = range_geomeans(rows)
    out = []
    for c in FP8GEMM_LAYERS:
        for name, target in TARGETS.items():
            g, n = means.get(c, {}).get(name, (float("nan"), 0))
            out.append(Check(f"{c} geomean >= {target}x bf16 at {name}", (g >= target) if n else None,
                             f"{g:.3f} over {n} points" if n else "no points"))
    return out


def check_every_point(rows: Sequence[dict]) -> List[Check]:
    out = []
    for c in FP8GEMM_LAYERS:
        mine = [r for r in rows if r["contender"] == c]
        below = [r for r in mine if r["x_bf16"] < 1.0]
        beyond = [f"{r['model']} M={r['M']} ({r['x_bf16']:.3f})" for r in below if r["x_bf16"] < 1.0 - _gap(r["noise"])]
        out.append(Check(f"{c} >= 1.0x bf16 at every point", (not beyond) if mine else None,
                         f"{len(below)} of {len(mine)} points below 1.0, beyond the noise at: {_where(beyond) or 'none'}"))
    return out


def check_same_mode(rows: Sequence[dict]) -> List[Check]:
    """fp8gemm's layer against each contender of its scale mode, point by point (time ratio
    other us / fp8gemm us; a shortfall within the point's noise is reported but passes)."""
    out = []
    points = _points(rows)
    for mine, others in SAME_MODE.items():
        for other in others:
            pairs = [(key, p[mine], p[other]) for key, p in points.items() if mine in p and other in p]
            slower = [(k, a, b) for k, a, b in pairs if b["us_per_step"] < a["us_per_step"]]
            beyond = [f"{k[0]} M={k[1]} ({b['us_per_step'] / a['us_per_step']:.3f})" for k, a, b in slower
                      if b["us_per_step"] / a["us_per_step"] < 1.0 - _gap(a["noise"])]
            out.append(Check(f"{mine} >= {other} at every point", (not beyond) if pairs else None,
                             f"{len(slower)} of {len(pairs)} points slower, beyond the noise at: {_where(beyond) or 'none'}"
                             if pairs else "no common points"))
    return out


def check_small_m(rows: Sequence[dict]) -> List[Check]:
    """At M <= 16: dynamic within 5% of static, and the static layer's speed as a fraction of the
    GEMM alone on pre-quantized input (what the quantization costs on top of the GEMM)."""
    points = [(k, p) for k, p in _points(rows).items() if k[1] <= 16]
    dyn = [(k, p["fp8gemm_dynamic"]["us_per_step"] / p["fp8gemm_static"]["us_per_step"]) for k, p in points
           if "fp8gemm_dynamic" in p and "fp8gemm_static" in p]
    over = [f"{k[0]} M={k[1]} ({v:.3f})" for k, v in dyn if v > DYNAMIC_MAX_COST]
    frac = [(k, p["fp8gemm_gemm"]["us_per_step"] / p["fp8gemm_static"]["us_per_step"]) for k, p in points
            if "fp8gemm_gemm" in p and "fp8gemm_static" in p]
    g = geomean(v for _, v in frac)
    low = [f"{k[0]} M={k[1]} ({v:.3f})" for k, v in frac if v < CEILING_MIN_FRACTION]
    return [
        Check(f"fp8gemm_dynamic within {100 * (DYNAMIC_MAX_COST - 1):.0f}% of fp8gemm_static at M<=16",
              (not over) if dyn else None,
              f"worst {max(v for _, v in dyn):.3f} (dynamic / static us); over at: {_where(over) or 'none'}"
              if dyn else "no points"),
        Check(f"fp8gemm_static >= {CEILING_MIN_FRACTION} of fp8gemm_gemm at M<=16 (geomean)",
              (g >= CEILING_MIN_FRACTION) if frac else None,
              f"geomean {g:.3f}, min {min(v for _, v in frac):.3f} (gemm us / static us); below at: "
              f"{_where(low) or 'none'}" if frac else "no points"),
    ]


def checks(rows: Sequence[dict]) -> List[Check]:
    return check_targets(rows) + check_every_point(rows) + check_same_mode(rows) + check_small_m(rows)


def geomean_table(rows: Sequence[dict], title: str) -> List[str]:
    """A markdown table: one line per contender, geomean x bf16 per M range (points)."""
    means = range_geomeans(rows)
    order = list(dict.fromkeys(r["contender"] for r in rows))
    lines = [f"{title}", "| contender | " + " | ".join(name for name, _ in RANGES) + " |",
             "|---|" + "---|" * len(RANGES)]
    for c in order:
        cells = [f"{means[c][name][0]:.3f} ({means[c][name][1]})" if name in means.get(c, {}) else "-"
                 for name, _ in RANGES]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines


def summary_lines(rows: Sequence[dict]) -> List[str]:
    models = list(dict.fromkeys(r["model"] for r in rows))
    lines = []
    for model in models:
        lines += geomean_table([r for r in rows if r["model"] == model], f"\n## {model}: geomean x bf16 (points)")
    lines += geomean_table(rows, f"\n## all {len(models)} models: geomean x bf16 (points)")
    lines.append("\n## checks")
    for c in checks(rows):
        verdict = "n/a " if c.ok is None else ("PASS" if c.ok else "FAIL")
        lines.append(f"{verdict}  {c.name}: {c.detail}")
    return lines


def plot(path: str, rows: Sequence[dict], title: str = "FP8 linear layers per decode step, x bf16 F.linear") -> None:
    """A PNG: one panel per model, x = M (log2), y = bf16 us / contender us, one line per contender
    (the same colour in every panel); the line y = 1 is bf16."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r["model"] for r in rows))
    contenders = [c for c in dict.fromkeys(r["contender"] for r in rows) if c != "bf16"]
    cols = min(2, len(models))
    nrows = math.ceil(len(models) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.5 * cols, 4.2 * nrows), squeeze=False, sharey=True)
    styles = {"static": "-", "dynamic": "--", "gemm": ":"}
    for ax, model in zip(axes.flat, models):
        for i, c in enumerate(contenders):
            sel = sorted((r for r in rows if r["model"] == model and r["contender"] == c), key=lambda r: r["M"])
            if sel:
                ax.plot([r["M"] for r in sel], [r["x_bf16"] for r in sel], styles.get(sel[0].get("mode"), "-"),
                        marker="o", markersize=3, color=f"C{i % 10}", label=c)
        ax.axhline(1.0, color="black", linewidth=0.8, label="bf16")
        ax.set_xscale("log", base=2)
        ax.set_title(model, fontsize=10)
        ax.set_xlabel("M (tokens per step)")
        ax.set_ylabel("x bf16 (bf16 us / contender us)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(models):]:
        ax.axis("off")
    legend = {}
    for ax in axes.flat:  # every contender once, also one that ran on some models only
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    labels, handles = list(legend), list(legend.values())
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06 + 0.02 * (len(labels) > 6), 1, 0.97))
    fig.savefig(path, dpi=120)
    plt.close(fig)
