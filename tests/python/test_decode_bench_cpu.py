"""bench/decode_step.py (fp8gemm.bench) without a GPU: argument checks, model resolution,
--dry-run of every subcommand, the e2e pipeline on the CPU (FP8 variants through the torch
reference layer), its batch list and presets, the plot, and the helpers the isolation mode relies
on. The layer benchmark's own: test_layer_bench_cpu.py."""

import os
import subprocess
import sys
from pathlib import Path


import pytest
import torch

import fp8gemm
from fp8gemm.bench import decode_step, isolate, layers, step

ROOT = Path(__file__).resolve().parents[2]
TP4_70B = "qkv=2560x8192,o=8192x2048,gate_up=14336x8192,down=8192x7168"


def test_dry_run_step_presets(capsys):
    assert decode_step.main(["step", "--model", "llama8b,llama70b_tp8", "--layers", "4", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "llama8b: 16 GEMMs per step" in out and "llama70b_tp8.down 8192x3584 x4" in out
    assert "13 steps per model and contender" in out


def test_dry_run_isolate_custom_linears(capsys):
    assert decode_step.main(["isolate", "--linears", TP4_70B, "--label", "llama70b_tp4", "--layers", "80",
                             "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "llama70b_tp4: 320 GEMMs per step" in out and "M [256]" in out


@pytest.mark.parametrize("argv,text", [
    (["step", "--dry-run"], "name a model"),
    (["step", "--model", "llama9b", "--dry-run"], "unknown preset 'llama9b'"),
    (["step", "--linears", "qkv=2560x8190", "--dry-run"], "qkv not multiples of 16"),
    (["step", "--linears", "qkv:2560x8192", "--dry-run"], "is not name=NxK"),
    (["step", "--model", "llama8b", "--m", "0", "--dry-run"], "--m: value '0'"),
])
def test_argument_errors(argv, text, capsys):
    assert decode_step.main(argv) == 2
    assert text in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["step", "--model", "llama8b", "--layers", "0"], ["e2e", "--new-tokens", "1"]])
def test_parser_rejects(argv):
    with pytest.raises(SystemExit):
        decode_step.parse_args(argv)


CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "hf_configs")


def test_hf_config_dense_runs_each_linear_once_per_layer():
    model = layers.from_hf_config(os.path.join(CONFIGS, "llama-3.1-8b.json"), tp=8, layers=8)
    assert model.label == "llama-3.1-8b_tp8"
    assert {s.copies for s in model.linears} == {8}
    assert (model.linears[0].n, model.linears[0].k) == (768, 4096)  # qkv: (32 + 2 * 8) * 128 / 8


def test_hf_config_hybrid_keeps_its_proportions():
    model = layers.from_hf_config(os.path.join(CONFIGS, "nemotron-h-8b-base-8k.json"), tp=1, layers=12)
    copies = {s.name: s.copies for s in model.linears}
    assert copies["in_proj"] == copies["up"] == 12 and copies["qkv"] == 2  # 24, 24 and 4 of 52 layers


def test_step_order_interleaves_layers():
    model = layers.StepModel("m", [layers.LinearShape("a", 16, 16, 2), layers.LinearShape("b", 16, 16, 3)])
    inputs = step.StepInputs.__new__(step.StepInputs)
    inputs.model = model
    assert inputs.order() == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("b", 2)]
    assert inputs.order(["b"]) == [("b", 0), ("b", 1), ("b", 2)]


def test_slower_than_torch_uses_the_noise():
    rows = [dict(x_tuned=0.995, noise=0.0), dict(x_tuned=0.97, noise=0.02), dict(x_tuned=0.95, noise=0.01)]
    assert step.slower_than_torch(rows) == [rows[2]]


@pytest.mark.parametrize("tactic,twin", [
    ("small_m:wgmma,rows=64,splitk=8,stages=8,pdl=2,wload=cp", "small_m:wgmma,rows=64,splitk=8,stages=8,pdl=0,wload=cp"),
    ("small_m:wgmma,rows=47,splitk=1,stages=7,pdl=2,early=4,kblocks=4", "small_m:wgmma,rows=47,splitk=1,stages=7,pdl=0,kblocks=4"),
    ("small_m:wgmma,rows=32,splitk=1,stages=11,pdl=0", None),
    ("cutlass:sm90_pingpong_64x16x256_c4x1x1_swap_pdl", "cutlass:sm90_pingpong_64x16x256_c4x1x1_swap"),
    ("cutlass:sm90_pingpong_128x128x128_c1x1x1", None),
    ("cublaslt:heuristic", None),
])
def test_without_pdl(tactic, twin):
    assert isolate.without_pdl(tactic) == twin


def test_plot_and_csv(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [dict(model=m, M=M, x_untuned=1.0 + 0.01 * i, x_tuned=1.1 - 0.01 * i, torch_us=10.0)
            for m in ("llama8b", "nemotronh8b") for i, M in enumerate((1, 16, 256, 4096))]
    from fp8gemm.bench import report

    report.write_csv(str(tmp_path / "step.csv"), rows)
    assert decode_step.main(["plot", "--csv", str(tmp_path / "step.csv"), "--out", str(tmp_path / "step.png")]) == 0
    assert (tmp_path / "step.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


transformers = pytest.importorskip("transformers")


def test_e2e_dry_run(capsys):
    assert decode_step.main(["e2e", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "variants bf16" in out and "tokens/s" in out


def test_e2e_dry_run_with_a_config_file(tmp_path, capsys):
    import json

    from fp8gemm.bench.e2e import TINY_LLAMA

    (tmp_path / "config.json").write_text(json.dumps(dict(TINY_LLAMA, architectures=["LlamaForCausalLM"])))
    assert decode_step.main(["e2e", "--hf-config", str(tmp_path), "--dry-run"]) == 0
    assert "LlamaForCausalLM, 14 fp8gemm Linear layers" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{}")
    assert decode_step.main(["e2e", "--hf-config", str(tmp_path / "bad.json"), "--dry-run"]) == 2


def test_e2e_fp8_variants_on_cpu(monkeypatch):
    """The whole comparison on the CPU, with fp8gemm's layer replaced by the torch reference layer
    (the op needs a GPU): the two FP8 variants then agree exactly and both stay close to bf16."""
    from fp8gemm.bench import e2e

    monkeypatch.setattr(fp8gemm.nn.Linear, "forward", e2e.ScaledMMLinear.forward)
    result = e2e.run_e2e(e2e.TINY_LLAMA, 2, batch=2, prompt_len=6, new_tokens=4, repeats=1, graphs=False,
                         device="cpu", with_fp8=True, log=lambda s: None)
    assert set(result["variants"]) == {"bf16", "fp8gemm", "torch_fp8"}
    assert result["fp8gemm_vs_torch_fp8"]["rel_err"] == 0.0
    for name in ("fp8gemm", "torch_fp8"):
        row = result["variants"][name]
        assert row["rel_err_vs_bf16"] < 0.2 and row["cosine_vs_bf16"] > 0.98, row
        assert row["x_bf16"] > 0


def test_e2e_batches_report_fp8_against_bf16(monkeypatch):
    """Every --batch on one set of variants; the result names each FP8 variant's tokens/s over
    bf16's per batch."""
    from fp8gemm.bench import e2e

    monkeypatch.setattr(fp8gemm.nn.Linear, "forward", e2e.ScaledMMLinear.forward)
    lines = []
    result = e2e.run_e2e_batches(e2e.TINY_LLAMA, 2, [1, 3], prompt_len=4, new_tokens=3, repeats=1, graphs=False,
                                 device="cpu", label="tiny", log=lines.append)
    assert set(result["batches"]) == {"1", "3"} and result["batches"]["3"]["batch"] == 3
    assert set(result["fp8gemm_x_bf16"]) == {"1", "3"} and set(result["torch_fp8_x_bf16"]) == {"1", "3"}
    assert any(line.startswith("# e2e summary tiny: fp8gemm x bf16 tokens/s: batch 1 ") for line in lines)


def test_e2e_batch_list_and_presets(tmp_path, capsys):
    import json

    args = decode_step.parse_args(["e2e"])
    assert args.batch == [1, 8] and args.preset == "llama3_2_1b"
    assert decode_step.parse_args(["e2e", "--batch", "8,1,8"]).batch == [8, 1]
    for bad in ("0", "1,x", ""):
        with pytest.raises(SystemExit):
            decode_step.parse_args(["e2e", "--batch", bad])
    out = tmp_path / "e2e.json"
    assert decode_step.main(["e2e", "--preset", "qwen3_4b", "--batch", "1,2", "--json", str(out), "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "# qwen3_4b: Qwen3ForCausalLM, 84 fp8gemm Linear layers (12 decoder layers)" in text  # 7 per layer
    assert set(json.loads(out.read_text())["batches"]) == {"1", "2"}


def test_script_runs_from_the_checkout():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "decode_step.py"), "step", "--model", "llama8b",
                          "--dry-run"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "llama8b: 32 GEMMs per step" in out.stdout
