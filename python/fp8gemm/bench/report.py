"""The decode-step benchmark's outputs: CSV rows and the plot (speedup over torch._scaled_mm
against M, one line per contender and model)."""

from __future__ import annotations

import csv
from typing import Sequence


def write_csv(path: str, rows: Sequence[dict]) -> None:
    fields = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


def plot_or_say(plot_fn, path: str, rows: Sequence[dict], csv_path, log) -> None:
    """plot_fn(path, rows), or where matplotlib is missing, a line saying how to make the plot
    elsewhere from the CSV."""
    try:
        plot_fn(path, rows)
        log(f"# plot: {path}")
    except ImportError as e:
        log(f"# no plot ({e}); make it elsewhere: decode_step.py plot --csv {csv_path or 'CSV'} --out PNG")


def plot(path: str, rows: Sequence[dict], title: str = "decode step: every linear in one CUDA graph") -> None:
    """A PNG: x = M (log2), y = torch._scaled_mm time / contender time per step, one line per
    (model, contender); the line y = 1 is torch._scaled_mm itself."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    models = list(dict.fromkeys(r["model"] for r in rows))
    styles = {"untuned": ":", "tuned": "-"}
    for i, model in enumerate(models):
        sel = sorted((r for r in rows if r["model"] == model), key=lambda r: r["M"])
        color = f"C{i % 10}"
        for contender, style in styles.items():
            ax.plot([r["M"] for r in sel], [r[f"x_{contender}"] for r in sel], style, marker="o", markersize=3,
                    color=color, label=f"{model} fp8gemm {contender}")
    ax.axhline(1.0, color="black", linewidth=0.8, label="torch._scaled_mm")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M (tokens per step)")
    ax.set_ylabel("speedup over torch._scaled_mm (per step)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
