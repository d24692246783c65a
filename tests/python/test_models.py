"""fp8gemm.models.hf_config_linears (no GPU): the library's config.json parser from Python, on the
shipped configs (tests/data/hf_configs; the C++ tests check every shape at TP 1, 2, 4 and 8)."""

from pathlib import Path

import pytest

from fp8gemm.models import ModelLinear, hf_config_linears

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf_configs"


def test_llama_8b_at_tp8():
    linears, notes = hf_config_linears(CONFIGS / "llama-3.1-8b.json", tp=8)
    assert [(l.name, l.n, l.k, l.count, l.parallel) for l in linears] == [
        ("qkv", 768, 4096, 32, "column"), ("o", 4096, 512, 32, "row"),
        ("gate_up", 3584, 4096, 32, "column"), ("down", 4096, 1792, 32, "row")]
    assert all(l.supported for l in linears)
    assert notes == ["head_dim absent: hidden_size / num_attention_heads = 128"]


def test_nemotron_nano_9b_reports_what_cannot_run(tmp_path):
    (tmp_path / "config.json").write_text((CONFIGS / "nemotron-nano-9b-v2.json").read_text())
    linears, notes = hf_config_linears(tmp_path, tp=8)  # a folder holding config.json
    by_name = {l.name: l for l in linears}
    assert by_name["in_proj"] == ModelLinear("in_proj", 2832, 4480, 27, "column", "")
    assert by_name["up"].unsupported == "N = 1960 is not a multiple of 16" and not by_name["up"].supported
    assert any("down 4480x1960 at tp = 8" in n for n in notes)
    assert [l.n for l in hf_config_linears(tmp_path).linears][:4] == [22656, 4480, 15680, 4480]


def test_errors_name_the_field_or_rule(tmp_path):
    with pytest.raises(ValueError, match="num_attention_heads = 28 is not divisible by tp = 8"):
        hf_config_linears(CONFIGS / "qwen2.5-7b.json", tp=8)
    with pytest.raises(ValueError, match="no such file or folder"):
        hf_config_linears(tmp_path / "missing.json")
    (tmp_path / "config.json").write_text('{"architectures": ["GPT2LMHeadModel"]}')
    with pytest.raises(ValueError, match="architectures: \"GPT2LMHeadModel\" is not an architecture"):
        hf_config_linears(tmp_path)
    with pytest.raises(ValueError, match="tp must be an integer >= 1"):
        hf_config_linears(CONFIGS / "qwen3-8b.json", tp=0)
    with pytest.raises(TypeError, match="tp must be an int"):
        hf_config_linears(CONFIGS / "qwen3-8b.json", tp=2.0)
