"""fp8gemm.quantize_ without a GPU: which layers it swaps (filters, the output head, misaligned
and subclassed layers, shared layers), static scales per layer, the state dict round trip, and a
Hugging Face Llama built from a config (random weights, no download) traced on meta tensors."""

import io
import warnings

import pytest
import torch
from torch import nn

import fp8gemm
from fp8gemm.nn import Linear


class Block(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.attn = nn.Linear(64, 192, bias=False)
        self.mlp = nn.Sequential(nn.Linear(64, 128), nn.SiLU(), nn.Linear(128, 64))
        self.shared = shared
        self.odd = nn.Linear(64, 20)  # out_features not a multiple of 16


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        shared = nn.Linear(64, 64)
        self.blocks = nn.ModuleList([Block(shared), Block(shared)])
        self.proj = nn.modules.linear.NonDynamicallyQuantizableLinear(64, 64)  # a subclass: kept
        self.lm_head = nn.Linear(64, 256, bias=False)


def swapped(model):
    return sorted(name for name, m in model.named_modules(remove_duplicate=False) if isinstance(m, Linear))


def quiet_quantize(model, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fp8gemm.quantize_(model, *args, **kwargs)
    return out, [str(w.message) for w in caught]


def test_swaps_every_aligned_linear_but_the_head():
    model = Tiny().to(torch.bfloat16)
    out, messages = quiet_quantize(model)
    assert out is model
    assert swapped(model) == [f"blocks.{i}.{n}" for i in (0, 1) for n in ("attn", "mlp.0", "mlp.2", "shared")]
    assert type(model.lm_head) is nn.Linear and type(model.proj) is nn.modules.linear.NonDynamicallyQuantizableLinear
    assert type(model.blocks[0].odd) is nn.Linear
    assert model.blocks[0].shared is model.blocks[1].shared  # one shared layer stays one
    assert len(messages) == 1 and "multiples of 16" in messages[0]
    assert "blocks.0.odd (64 -> 20)" in messages[0] and "blocks.1.odd (64 -> 20)" in messages[0]
    assert model.blocks[0].attn.out_dtype == torch.bfloat16 and model.blocks[0].attn.dynamic


def test_filter_fn_and_include_lm_head():
    model, _ = quiet_quantize(Tiny(), lambda module, name: "mlp" in name)
    assert swapped(model) == ["blocks.0.mlp.0", "blocks.0.mlp.2", "blocks.1.mlp.0", "blocks.1.mlp.2"]
    seen = []
    model, _ = quiet_quantize(Tiny(), lambda module, name: seen.append((type(module), name)) or name == "lm_head",
                              include_lm_head=True)
    assert swapped(model) == ["lm_head"]
    assert all(t is nn.Linear for t, _ in seen)  # the filter only sees plain nn.Linear layers


def test_nothing_swapped_warns():
    _, messages = quiet_quantize(Tiny(), lambda module, name: False)
    assert any("no nn.Linear layer was swapped" in m for m in messages)


def test_options_reach_every_layer():
    model, _ = quiet_quantize(Tiny(), activation_scale=0.5, out_dtype=torch.float16, backend="cublaslt")
    layer = model.blocks[0].attn
    assert layer.input_scale.item() == 0.5 and layer.out_dtype == torch.float16 and layer.backend == "cublaslt"


def test_per_layer_static_scales():
    names = ["blocks.0.attn", "blocks.0.mlp.0", "blocks.0.mlp.2", "blocks.0.shared"]
    scales = {n: 0.1 * (i + 1) for i, n in enumerate(names)}
    model, _ = quiet_quantize(Tiny(), lambda m, name: name.startswith("blocks.0."), activation_scale=scales)
    assert model.blocks[0].mlp[2].input_scale.item() == pytest.approx(0.3)
    with pytest.raises(KeyError, match="no scale for layer 'blocks.1.attn'"):
        quiet_quantize(Tiny(), activation_scale=scales)


def test_argument_errors():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        fp8gemm.quantize_([nn.Linear(16, 16)])
    with pytest.raises(TypeError, match="filter_fn must be callable"):
        fp8gemm.quantize_(Tiny(), filter_fn="mlp")


def test_state_dict_round_trip():
    torch.manual_seed(0)
    src, _ = quiet_quantize(Tiny().to(torch.bfloat16), activation_scale=0.25)
    buf = io.BytesIO()
    torch.save(src.state_dict(), buf)
    torch.manual_seed(1)
    dst, _ = quiet_quantize(Tiny().to(torch.bfloat16), activation_scale=1.0)
    dst.load_state_dict(torch.load(io.BytesIO(buf.getvalue())), strict=True)
    src_sd, dst_sd = src.state_dict(), dst.state_dict()
    assert src_sd.keys() == dst_sd.keys()
    assert "blocks.0.attn.weight_scale" in src_sd and "blocks.0.attn.input_scale" in src_sd
    for key in src_sd:
        assert src_sd[key].dtype == dst_sd[key].dtype and torch.equal(src_sd[key].float(), dst_sd[key].float()), key


transformers = pytest.importorskip("transformers")


def tiny_llama(device="cpu"):
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=256, num_hidden_layers=2,
                                      max_position_embeddings=64)
    with torch.device(device):
        return transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval().requires_grad_(False)


def test_hf_llama_layers_and_head():
    model, messages = quiet_quantize(tiny_llama())
    assert messages == []
    names = swapped(model)
    assert len(names) == 2 * 7 and "model.layers.1.self_attn.k_proj" in names and "model.layers.0.mlp.down_proj" in names
    assert type(model.lm_head) is nn.Linear
    assert model.model.layers[0].self_attn.k_proj.weight.shape == (32, 64)  # GQA: 2 kv heads x 16


def test_hf_llama_state_dict_round_trip():
    torch.manual_seed(0)
    src, _ = quiet_quantize(tiny_llama())
    buf = io.BytesIO()
    torch.save(src.state_dict(), buf)
    torch.manual_seed(1)
    dst, _ = quiet_quantize(tiny_llama())
    dst.load_state_dict(torch.load(io.BytesIO(buf.getvalue())), strict=True)
    for (key, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert torch.equal(a.float(), b.float()), key


def test_hf_llama_on_meta_eager_and_compiled():
    """The quantized model's shapes through the ops' Meta implementations, eagerly and under
    torch.compile(fullgraph=True) (fake tensors): no graph break, no host sync."""
    model, _ = quiet_quantize(tiny_llama("meta"))
    ids = torch.zeros(2, 5, dtype=torch.long, device="meta")
    assert model(input_ids=ids).logits.shape == (2, 5, 256)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    assert compiled(input_ids=ids, use_cache=False).logits.shape == (2, 5, 256)
