"""Decode-step benchmarks of fp8gemm against torch._scaled_mm and bf16 (see fp8gemm/bench/__init__.py).

  step     every linear of a step in one CUDA graph per contender, per-step time at each M
  layer    whole FP8 linear layers (bf16 in, bf16 out) per step against bf16 F.linear: torch FP8,
           fbgemm-gpu-genai, fp8gemm's layer static/dynamic and its GEMM alone (the ceiling)
  isolate  the step taken apart at chosen M values (alone, swap, no PDL, out=, profile)
  e2e      greedy decode of a transformers model with random weights: bf16, fp8gemm, torch FP8
  plot     the plot of a step or layer CSV (on a machine with matplotlib; a layer CSV's summary too)

Models (step, layer, isolate): --model PRESET[,PRESET] (fp8gemm.suite, plus qwen3_4b and
mistral_large_tp8), --hf-config PATH (repeatable) with --tp N[,N] (per-rank shapes through
fp8gemm.hf_config_linears), or --linears "qkv=2560x8192,o=8192x2048,..." (one decoder layer's
N x K, e.g. Llama-3.3-70B at TP 4).
--dry-run checks the arguments and builds everything that needs no GPU, then stops.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import List

from ..suite import parse_m
from . import layer_contenders
from . import layers as step_layers

STEP_M = "1,2,4,8,16,32,64,128,256,512,1024,2048,4096"
E2E_PRESETS = ("llama3_2_1b", "qwen3_4b")


def parse_batches(spec: str) -> List[int]:
    values = [v.strip() for v in str(spec).split(",") if v.strip()]
    if not values or not all(v.isdigit() and int(v) >= 1 for v in values):
        raise ValueError(f"--batch: '{spec}' is not a comma-separated list of batch sizes >= 1")
    return list(dict.fromkeys(int(v) for v in values))


def _model_options(p: argparse.ArgumentParser, default_m: str) -> None:
    p.add_argument("--model", help="model presets, comma-separated (fp8gemm.suite.MODELS, qwen3_4b, mistral_large_tp8)")
    p.add_argument("--hf-config", action="append", default=[], help="a config.json or a folder holding one")
    p.add_argument("--tp", default="1", help="tensor-parallel degrees for --hf-config, comma-separated")
    p.add_argument("--linears", help='one decoder layer\'s linears: "name=NxK,name=NxK,..."')
    p.add_argument("--label", default="custom", help="the model name of --linears in tables and the plot")
    p.add_argument("--layers", type=int, default=8, help="decoder layers per step (distinct weights)")
    p.add_argument("--m", default=default_m, help='M values: "1,16,256", "1:4096:x2" or "suite"')
    p.add_argument("--replays", type=int, default=15, help="timed replays per graph (median)")
    p.add_argument("--key-budget-ms", type=float, default=100.0, help="fp8gemm.tune budget per key (layer: 0 skips tuning)")
    p.add_argument("--cache", help="fp8gemm cache file: merged before tuning, saved after")
    p.add_argument("--csv", help="results as CSV")
    p.add_argument("--dry-run", action="store_true", help="check arguments and models, touch no GPU")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="decode_step", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    step = sub.add_parser("step", help="per-step time of every linear in one CUDA graph")
    _model_options(step, STEP_M)
    step.add_argument("--plot", help="PNG: speedup over torch._scaled_mm against M")
    layer = sub.add_parser("layer", help="FP8 linear layers per step against bf16 F.linear")
    _model_options(layer, STEP_M)
    layer.add_argument("--contenders", help="a subset, comma-separated (bf16 always runs): " +
                       ", ".join(layer_contenders.BY_NAME))
    layer.add_argument("--plot", help="PNG: x bf16 against M, one panel per model")
    iso = sub.add_parser("isolate", help="what costs between the kernels of a step")
    _model_options(iso, "256")
    e2e = sub.add_parser("e2e", help="greedy decode of a transformers model with random weights")
    e2e.add_argument("--hf-config", help="config.json or folder (default: --preset)")
    e2e.add_argument("--preset", choices=sorted(E2E_PRESETS), default="llama3_2_1b",
                     help="a built-in config: llama3_2_1b (16 layers), qwen3_4b (12 of its 36 layers)")
    e2e.add_argument("--layers", type=int, help="override num_hidden_layers")
    e2e.add_argument("--batch", default="1,8", help="batch sizes, comma-separated (one decode each)")
    e2e.add_argument("--prompt", type=int, default=128, help="prompt tokens")
    e2e.add_argument("--new-tokens", type=int, default=128)
    e2e.add_argument("--repeats", type=int, default=3, help="decodes per variant, round-robin (median)")
    e2e.add_argument("--no-graphs", action="store_true", help="eager decode steps instead of CUDA graphs")
    e2e.add_argument("--json", help="results as JSON")
    e2e.add_argument("--dry-run", action="store_true", help="a tiny model on the CPU (bf16 only)")
    plot = sub.add_parser("plot", help="the plot of a step CSV")
    plot.add_argument("--csv", required=True)
    plot.add_argument("--out", required=True, help="PNG path")
    args = p.parse_args(argv)
    for name in ("layers", "replays", "prompt", "repeats"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            p.error(f"--{name} must be >= 1, got {value}")
    if args.command == "e2e":
        try:
            args.batch = parse_batches(args.batch)
        except ValueError as e:
            p.error(str(e))
    if getattr(args, "new_tokens", 2) < 2:
        p.error("--new-tokens must be >= 2 (the first comes from the prompt; the rest are timed)")
    return args


def parse_linears(spec: str, layers: int, label: str) -> step_layers.StepModel:
    shapes = []
    for item in (part.strip() for part in spec.split(",") if part.strip()):
        name, _, dims = item.partition("=")
        n, _, k = dims.lower().partition("x")
        if not (name and n.isdigit() and k.isdigit()):
            raise ValueError(f"--linears: '{item}' is not name=NxK (e.g. qkv=2560x8192)")
        shapes.append(step_layers.LinearShape(name, int(n), int(k), layers))
    if not shapes:
        raise ValueError("--linears: no linear given")
    return step_layers.StepModel(label, shapes)


def resolve_models(args) -> List[step_layers.StepModel]:
    models = []
    if args.model:
        models += [step_layers.preset(name.strip(), args.layers) for name in args.model.split(",")]
    tps = [int(t) for t in args.tp.split(",")]
    for path in args.hf_config:
        models += [step_layers.from_hf_config(path, tp, args.layers) for tp in tps]
    if args.linears:
        models.append(parse_linears(args.linears, args.layers, args.label))
    if not models:
        raise ValueError("name a model: --model, --hf-config or --linears")
    for model in models:
        bad = [s.name for s in model.linears if s.n % 16 or s.k % 16]
        if bad:
            raise ValueError(f"{model.label}: {', '.join(bad)} not multiples of 16 (the FP8 GEMM's rule for N and K)")
    return models


def run_step(args, models) -> int:
    import torch

    from . import report, step

    ms = parse_m(args.m)
    print(f"# {torch.cuda.get_device_name()}; torch {torch.__version__}; M {ms}", flush=True)
    for model in models:
        print("# " + model.describe(), flush=True)
    defaults = step.untuned_defaults(models, ms)
    if args.command == "isolate":
        from .isolate import isolate

        step.tune_all(models, ms, args.key_budget_ms, args.cache)
        rows = [r for model in models for r in isolate(model, ms, args.replays, log=lambda s: print(s, flush=True))]
    else:
        decisions = step.tune_all(models, ms, args.key_budget_ms, args.cache)
        print(f"# tuned {len(decisions)} keys", flush=True)
        print(step.HEADER, flush=True)
        rows = [r for model in models for r in step.bench_model(model, ms, defaults, args.replays,
                                                                  log=lambda s: print(s, flush=True))]
        slow = step.slower_than_torch(rows)
        worst = min(rows, key=lambda r: r["x_tuned"])
        print(f"\n# worst tuned point: {worst['model']} M={worst['M']} x {worst['x_tuned']:.3f} "
              f"(noise {100 * worst['noise']:.2f}%)")
        print("# tuned fp8gemm slower than torch._scaled_mm beyond the noise at: " +
              (", ".join(f"{r['model']} M={r['M']} (x {r['x_tuned']:.3f})" for r in slow) or "no point"))
        if args.plot:
            report.plot_or_say(report.plot, args.plot, rows, args.csv, print)
    if args.csv:
        report.write_csv(args.csv, rows)
        print(f"# csv: {args.csv}")
    return 0


def dry_run_models(args, models) -> int:
    ms = parse_m(args.m)
    for model in models:
        print(f"# {model.describe()}")
    print(f"# M {ms}: {len(ms)} steps per model and contender; dry run: nothing was timed")
    if getattr(args, "plot", None):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("# note: matplotlib is not importable here; the plot will be skipped (the CSV is written)")
    return 0


def check_e2e_config(config: dict, layers, label: str) -> None:
    """The config builds in transformers and quantize_ swaps its layers (on meta: no memory)."""
    import torch
    import transformers

    import fp8gemm
    from .e2e import build_config

    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(build_config(config, layers))
    fp8gemm.quantize_(model)
    print(f"# {label}: {type(model).__name__}, {sum(isinstance(m, fp8gemm.nn.Linear) for m in model.modules())} "
          f"fp8gemm Linear layers ({model.config.num_hidden_layers} decoder layers)")


def run_e2e_command(args) -> int:
    from .e2e import PRESETS, TINY_LLAMA, load_config_dict, run_e2e_batches

    config = load_config_dict(args.hf_config, args.preset)
    layers = args.layers or (None if args.hf_config else PRESETS[args.preset][1])
    label = args.hf_config or args.preset
    if args.dry_run:  # the real config on meta, then the whole pipeline on a tiny model on the CPU (bf16 only)
        check_e2e_config(config, layers, label)
        result = run_e2e_batches(dict(TINY_LLAMA), 2, args.batch, prompt_len=5, new_tokens=3, repeats=1,
                                 graphs=False, device="cpu", with_fp8=False, label="tiny")
    else:
        result = run_e2e_batches(config, layers, args.batch, args.prompt, args.new_tokens, args.repeats,
                                 not args.no_graphs, "cuda", label=label, log=lambda s: print(s, flush=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


def run_layer_command(args, models) -> int:
    from . import layer

    contenders = layer_contenders.select(args.contenders)
    ms = parse_m(args.m)
    return (layer.dry_run if args.dry_run else layer.run)(args, models, contenders, ms)


def plot_command(args) -> int:
    """A step CSV's plot, or a layer CSV's (it has a contender column) and its summary."""
    import csv

    with open(args.csv) as f:
        rows = list(csv.DictReader(f))
    if rows and "contender" in rows[0]:
        from . import layer_summary

        floats = ("us_per_step", "x_bf16", "noise", "rel_err")
        rows = [dict(r, M=int(r["M"]), **{k: float(r[k]) for k in floats if k in r}) for r in rows]
        for line in layer_summary.summary_lines(rows):
            print(line)
        layer_summary.plot(args.out, rows)
        return 0
    from .report import plot

    plot(args.out, [dict(r, M=int(r["M"]), x_untuned=float(r["x_untuned"]), x_tuned=float(r["x_tuned"])) for r in rows])
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        if args.command == "plot":
            return plot_command(args)
        if args.command == "e2e":
            return run_e2e_command(args)
        models = resolve_models(args)
        if args.command == "layer":
            return run_layer_command(args, models)
        return dry_run_models(args, models) if args.dry_run else run_step(args, models)
    except (ValueError, ImportError, FileNotFoundError) as e:
        print(f"decode_step {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
