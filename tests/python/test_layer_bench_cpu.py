"""decode_step.py layer (fp8gemm.bench.layer*) without a GPU: its arguments, --dry-run (models and
contenders, no GPU touched), the probe that drops contenders which fail, the summary's geomeans
and checks on synthetic rows, the plot and the plot command on a layer CSV, and the torch
reference FP8 layer's numerics (torch._scaled_mm runs on the CPU in torch 2.11)."""

import math

import pytest
import torch

import fp8gemm
from fp8gemm.bench import decode_step, layer, layer_contenders, layer_summary, layers
from fp8gemm.bench.layer_contenders import Activation, Contender, WeightCopy
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3, quantize_per_tensor

MODELS = "qwen3_4b,mistral_large_tp8,llama8b,llama70b_tp8"


def test_layer_arguments():
    args = decode_step.parse_args(["layer", "--model", "qwen3_4b"])
    assert args.m == decode_step.STEP_M and args.layers == 8 and args.contenders is None
    assert args.replays == 15 and args.key_budget_ms == 100.0 and args.plot is None
    with pytest.raises(SystemExit):
        decode_step.parse_args(["layer", "--model", "qwen3_4b", "--replays", "0"])


def test_bench_presets_have_the_issue_shapes():
    qwen = {s.name: (s.n, s.k) for s in layers.preset("qwen3_4b", 8).linears}
    assert list(qwen.values()) == [(6144, 2560), (2560, 4096), (19456, 2560), (2560, 9728)]
    mistral = [(s.n, s.k) for s in layers.preset("mistral_large_tp8", 8).linears]
    assert mistral == [(1792, 12288), (12288, 1536), (7168, 12288), (12288, 3584)]


def test_dry_run_lists_models_and_contenders_without_the_gpu(capsys):
    cuda_was_initialized = torch.cuda.is_initialized()  # by a GPU test earlier in this process
    assert decode_step.main(["layer", "--model", MODELS, "--layers", "8", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "qwen3_4b: 32 GEMMs per step" in out and "mistral_large_tp8.qkv 1792x12288 x8" in out
    assert "llama70b_tp8: 32 GEMMs per step" in out
    for c in layer_contenders.CONTENDERS:
        assert f"# contender {c.name} " in out
    assert "M [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]: 13 points" in out
    assert "dry run: nothing was timed" in out
    assert cuda_was_initialized or not torch.cuda.is_initialized()


def test_contender_subsets(capsys):
    picked = layer_contenders.select("fp8gemm_static,torch_fp8_static")
    assert [c.name for c in picked] == ["bf16", "torch_fp8_static", "fp8gemm_static"]  # bf16 always, table order
    assert decode_step.main(["layer", "--model", "llama8b", "--contenders", "fp8gemm_gemm", "--dry-run"]) == 0
    assert "2 graphs per point" in capsys.readouterr().out
    assert decode_step.main(["layer", "--model", "llama8b", "--contenders", "cutlass", "--dry-run"]) == 2
    assert "--contenders: unknown cutlass" in capsys.readouterr().err


def _weight(n, k, seed):
    g = torch.Generator().manual_seed(seed)
    q, s = quantize_per_tensor(torch.randn(n, k, generator=g, dtype=torch.bfloat16) * 0.02)
    return WeightCopy(q, s, (q.float() * s).to(torch.bfloat16))


def _activation(m, k, seed):
    x = torch.randn(m, k, generator=torch.Generator().manual_seed(seed), dtype=torch.bfloat16)
    s = per_tensor_scale(x)
    return Activation(x, s, quantize_e4m3(x, s))


def _cpu_inputs(model):
    inputs = layer.LayerInputs.__new__(layer.LayerInputs)
    inputs.model = model
    inputs.weights = {s.name: [_weight(s.n, s.k, 10 * i + c) for c in range(s.copies)]
                      for i, s in enumerate(model.linears)}
    return inputs


def test_step_order_and_calls():
    model = layers.StepModel("m", [layers.LinearShape("a", 32, 16, 2), layers.LinearShape("b", 16, 32, 1)])
    inputs = _cpu_inputs(model)
    assert inputs.order() == [("a", 0, 16), ("b", 0, 32), ("a", 1, 16)]
    acts = {16: _activation(3, 16, 1), 32: _activation(3, 32, 2)}
    outs = [call() for call in layer.step_calls(inputs, acts, layer_contenders.BY_NAME["bf16"])]
    assert [tuple(o.shape) for o in outs] == [(3, 32), (3, 16), (3, 32)]


def test_probe_measures_numerics_and_drops_what_fails():
    """The torch contenders run on the CPU and land near bf16; a contender whose call raises is
    left out with a note, one above its max M is left out silently."""
    model = layers.StepModel("m", [layers.LinearShape("qkv", 64, 32, 1), layers.LinearShape("o", 32, 64, 1)])
    inputs = _cpu_inputs(model)
    acts = {32: _activation(4, 32, 1), 64: _activation(4, 64, 2)}

    def broken(w, a):
        def call():
            raise RuntimeError("f8f8bf16_lite cannot run when M > 4\nmore")
        return call

    wrong_scale = Contender("wrong", "torch", "static", "", lambda w, a: lambda: torch.nn.functional.linear(
        a.x, w.bf16) * 2)
    contenders = [layer_contenders.BY_NAME[n] for n in ("bf16", "torch_fp8_static", "torch_fp8_dynamic")] + [
        Contender("broken", "fbgemm", "dynamic", "", broken), Contender("small", "fbgemm", "dynamic", "", broken, max_m=2),
        wrong_scale]
    notes = []
    errs = layer.probe(inputs, acts, contenders, 4, lambda name, text: notes.append((name, text)))
    assert errs["bf16"] == 0.0
    assert 0 < errs["torch_fp8_static"] < 0.1 and 0 < errs["torch_fp8_dynamic"] < 0.1
    assert errs["wrong"] > layer.REL_ERR_LIMIT
    assert "broken" not in errs and "small" not in errs
    assert notes == [("broken", "fails at M=4: RuntimeError: f8f8bf16_lite cannot run when M > 4")]


def test_notes_say_each_reason_once():
    lines = []
    notes = layer.Notes(lines.append)
    notes("fbgemm_lite", "fails at M=8: RuntimeError: no")
    notes("fbgemm_lite", "fails at M=16: RuntimeError: no")
    notes("fbgemm_gemv", "fails at M=8: RuntimeError: no")
    assert lines == ["# note: fbgemm_lite fails at M=8: RuntimeError: no", "# note: fbgemm_gemv fails at M=8: RuntimeError: no"]
    assert notes.seen[("fbgemm_lite", "RuntimeError: no")] == 2


def test_table_columns_line_up():
    head = layer.header(layer_contenders.CONTENDERS)
    assert "torch_dyn" in head and "fbgemm_gemv" in head and "fg_st" in head
    rows = [dict(model="qwen3_4b", M=8, contender=c, us_per_step=100.0, x_bf16=x, noise=0.004)
            for c, x in (("bf16", 1.0), ("fp8gemm_static", 1.9))]
    line = layer.point_line(rows, layer_contenders.CONTENDERS)
    assert line.index("1.900") + len("1.900") == head.index("fg_st") + len("fg_st")  # right-aligned under it
    assert line.split()[3:] == ["-"] * 6 + ["1.900", "-", "-", "0.40%"]  # "-" where a contender did not run


def _rows(speed, ms=(1, 16, 64, 256, 512, 4096), models=("qwen3_4b", "mistral_large_tp8"), noise=0.005):
    """Synthetic rows: bf16 takes 100 us per step; speed[contender](model, m) is its x bf16."""
    rows = []
    for model in models:
        for m in ms:
            for c, x in speed.items():
                x = x(model, m) if callable(x) else x
                rows.append(dict(model=model, M=m, contender=c, mode=layer_contenders.BY_NAME[c].mode,
                                 us_per_step=100.0 / x, x_bf16=x, noise=noise, rel_err=0.03))
    return rows


GOOD = dict(bf16=1.0, torch_fp8_static=1.3, torch_fp8_dynamic=1.1, fbgemm_dynamic=1.2, fbgemm_lite=1.25,
            fp8gemm_static=lambda model, m: 2.0 if m <= 16 else 1.7, fp8gemm_dynamic=lambda model, m: 1.95 if m <= 16 else 1.7,
            fp8gemm_gemm=lambda model, m: 2.2 if m <= 16 else 1.8)


def test_range_geomeans():
    rows = _rows(dict(bf16=1.0, fp8gemm_static=lambda model, m: {1: 2.0, 16: 1.5}.get(m, 1.2)), ms=(1, 16, 64, 384, 512))
    means = layer_summary.range_geomeans(rows)
    g, n = means["fp8gemm_static"]["M<=16"]
    assert n == 4 and math.isclose(g, math.sqrt(3.0))
    assert means["fp8gemm_static"]["16<M<=256"][1] == 2 and means["fp8gemm_static"]["M>=512"][1] == 2  # 384: none
    assert layer_summary.range_of(384) is None and layer_summary.range_of(256) == "16<M<=256"


def test_checks_pass_on_good_rows():
    results = {c.name: c for c in layer_summary.checks(_rows(GOOD))}
    assert results["fp8gemm_static geomean >= 1.8x bf16 at M<=16"].ok
    assert results["fp8gemm_dynamic geomean >= 1.5x bf16 at 16<M<=256"].ok
    assert results["fp8gemm_static >= 1.0x bf16 at every point"].ok
    assert results["fp8gemm_dynamic >= fbgemm_dynamic at every point"].ok
    assert results["fp8gemm_static >= fbgemm_static at every point"].ok is None  # no fbgemm_static rows
    assert results["fp8gemm_dynamic within 5% of fp8gemm_static at M<=16"].ok
    ceiling = results["fp8gemm_static >= 0.85 of fp8gemm_gemm at M<=16 (geomean)"]
    assert ceiling.ok and "geomean 0.909" in ceiling.detail


def test_checks_fail_where_the_rows_say_so():
    bad = dict(GOOD, fp8gemm_static=lambda model, m: 0.98 if m == 4096 else (1.5 if m <= 16 else 1.7),
               fp8gemm_dynamic=lambda model, m: 1.2 if m <= 16 else 1.7,
               torch_fp8_static=lambda model, m: 0.985 if m == 4096 else 1.3)
    results = {c.name: c for c in layer_summary.checks(_rows(bad))}
    assert results["fp8gemm_static geomean >= 1.8x bf16 at M<=16"].ok is False
    every = results["fp8gemm_static >= 1.0x bf16 at every point"]
    assert every.ok is False and "2 of 12 points below 1.0" in every.detail and "qwen3_4b M=4096 (0.980)" in every.detail
    vs_torch = results["fp8gemm_static >= torch_fp8_static at every point"]
    assert vs_torch.ok is True and "2 of 12 points slower" in vs_torch.detail  # 0.98 against 0.985: within the noise
    assert results["fp8gemm_dynamic >= torch_fp8_dynamic at every point"].ok
    dyn = results["fp8gemm_dynamic within 5% of fp8gemm_static at M<=16"]
    assert dyn.ok is False and "worst 1.250" in dyn.detail
    assert results["fp8gemm_static >= 0.85 of fp8gemm_gemm at M<=16 (geomean)"].ok is False


def test_summary_lines():
    text = "\n".join(layer_summary.summary_lines(_rows(GOOD)))
    assert "## qwen3_4b: geomean x bf16 (points)" in text and "## all 2 models: geomean x bf16 (points)" in text
    assert "| fp8gemm_static | 2.000 (4) | 1.700 (4) | 1.700 (4) |" in text
    assert "PASS  fp8gemm_static geomean >= 1.8x bf16 at M<=16: 2.000 over 4 points" in text
    assert "n/a   fp8gemm_static >= fbgemm_static at every point: no common points" in text


def test_plot_and_the_plot_command(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from fp8gemm.bench import report

    rows = _rows(GOOD, models=("qwen3_4b", "mistral_large_tp8", "llama8b"))
    layer_summary.plot(str(tmp_path / "direct.png"), rows)
    assert (tmp_path / "direct.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report.write_csv(str(tmp_path / "layer.csv"), rows)
    assert decode_step.main(["plot", "--csv", str(tmp_path / "layer.csv"), "--out", str(tmp_path / "layer.png")]) == 0
    assert (tmp_path / "layer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "## all 3 models: geomean x bf16 (points)" in capsys.readouterr().out


def test_torch_reference_layer_numerics():
    """scaling's quantization, then the FP8 product with both scales and the bias; static with
    the dynamic scale's value gives the same output, and the leading dims come back."""
    from fp8gemm.bench.torch_ref import ScaledMMLinear, linear, to_torch_reference

    torch.manual_seed(0)
    dense = torch.nn.Linear(64, 32, dtype=torch.bfloat16)
    model = to_torch_reference(torch.nn.Sequential(fp8gemm.nn.Linear.from_linear(dense)))
    layer_ = model[0]
    assert type(layer_) is ScaledMMLinear
    x = torch.randn(2, 3, 64, dtype=torch.bfloat16)
    s = per_tensor_scale(x.reshape(-1, 64))
    ref = (quantize_e4m3(x, s).double() * s.double()) @ (layer_.weight.double() * layer_.weight_scale.double()).t()
    y = layer_(x)
    assert y.shape == (2, 3, 32) and y.dtype == torch.bfloat16
    torch.testing.assert_close(y.double(), ref + dense.bias.double(), rtol=2e-2, atol=2e-2)
    assert torch.equal(linear(x, layer_.weight, layer_.weight_scale, input_scale=s, bias=layer_.bias), y)
    assert linear(x[:0], layer_.weight, layer_.weight_scale).shape == (0, 3, 32)
    assert layer_(x.float()).dtype == torch.bfloat16
    with pytest.raises(ValueError, match="in_features=64"):
        layer_(torch.randn(2, 63, dtype=torch.bfloat16))


def test_torch_contenders_on_cpu():
    """The torch contenders' calls against the float64 product of their quantized operands."""
    w, a = _weight(48, 32, 1), _activation(5, 32, 2)
    ref = (a.fp8.double() * a.scale.double()) @ (w.fp8.double() * w.scale.double()).t()
    static = layer_contenders.BY_NAME["torch_fp8_static"].make(w, a)()
    dynamic = layer_contenders.BY_NAME["torch_fp8_dynamic"].make(w, a)()
    assert static.dtype == torch.bfloat16 and static.shape == (5, 48)
    torch.testing.assert_close(static.double(), ref, rtol=1e-2, atol=1e-3)
    assert torch.equal(static, dynamic)  # the static scale is this input's per_tensor_scale
    rows = w.scale_rows()
    assert rows.shape == (48,) and torch.equal(rows, w.scale.expand(48))
