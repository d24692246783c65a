"""fp8gemm.load_fp8_checkpoint without a GPU, on small synthetic safetensors checkpoints written
here in the ModelOpt and compressed-tensors namings (one sharded with an index): which layers
become fp8gemm.nn.Linear, their buffers bit for bit, static/dynamic scales, bias, models built
on the meta device, forward shapes on meta tensors, the quantization_config cross-check, and
every refusal with its message."""

import json
import logging
import warnings

import pytest
import torch
from torch import nn

pytest.importorskip("safetensors", reason="the checkpoints are written with safetensors (a transformers dependency)")
from safetensors.torch import save_file  # noqa: E402

import fp8gemm  # noqa: E402
from fp8gemm import load_fp8_checkpoint  # noqa: E402
from fp8gemm.nn import Linear  # noqa: E402
from fp8gemm.scaling import E4M3, quantize_per_tensor  # noqa: E402

HIDDEN, KV, FFN, VOCAB = 64, 32, 128, 256
QUANTIZED = [f"model.layers.{i}.{name}" for i in (0, 1) for name in (
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
    "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=True)
        self.k_proj = nn.Linear(HIDDEN, KV, bias=True)
        self.v_proj = nn.Linear(HIDDEN, KV, bias=True)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, h):  # shapes only: q mixed with k and v, no softmax
        return self.o_proj(self.q_proj(h) + torch.cat([self.k_proj(h), self.v_proj(h)], -1))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.up_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, h):
        return self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.RMSNorm(HIDDEN)
        self.self_attn = Attention()
        self.post_attention_layernorm = nn.RMSNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([Block(), Block()])
        self.norm = nn.RMSNorm(HIDDEN)


class TinyLM(nn.Module):
    """The module tree of a Hugging Face decoder: model.layers.N.{self_attn,mlp}.*_proj."""

    def __init__(self):
        super().__init__()
        self.model = Decoder()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids):
        x = self.model.embed_tokens(ids)
        for block in self.model.layers:
            x = block(x)
        return self.lm_head(self.model.norm(x))


def tiny_lm(dtype=torch.bfloat16, device=None):
    with torch.device(device or "cpu"):
        return TinyLM().to(dtype)


# ---- synthetic checkpoints ----------------------------------------------------------------------

MODELOPT_CONFIG = {
    "config_groups": {"group_0": {"input_activations": {"dynamic": False, "num_bits": 8, "type": "float"},
                                  "weights": {"dynamic": False, "num_bits": 8, "type": "float"},
                                  "targets": ["Linear"]}},
    "ignore": ["lm_head"], "quant_algo": "FP8",
    "kv_cache_scheme": {"dynamic": False, "num_bits": 8, "type": "float"},
    "producer": {"name": "modelopt", "version": "0.29.0"}, "quant_method": "modelopt",
}


def ct_args(strategy="tensor", dynamic=False):
    return {"actorder": None, "block_structure": None, "dynamic": dynamic, "group_size": None, "num_bits": 8,
            "observer": None if dynamic else "minmax", "observer_kwargs": {}, "strategy": strategy,
            "symmetric": True, "type": "float"}


def ct_config(weights=None, inputs="static"):
    inputs = {"static": ct_args(), "dynamic": ct_args("token", dynamic=True), None: None}[inputs]
    return {"config_groups": {"group_0": {"input_activations": inputs, "output_activations": None,
                                          "targets": ["Linear"], "weights": weights or ct_args()}},
            "format": "float-quantized", "global_compression_ratio": None, "ignore": ["lm_head"],
            "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}


def fp8_layer(n, k, seed):
    """(weight e4m3 [n, k], its 0-d float32 scale) of random values, as an exporter writes them."""
    g = torch.Generator().manual_seed(seed)
    return quantize_per_tensor(torch.randn(n, k, generator=g) * 0.05)


def checkpoint(naming="modelopt", static=True, seed=0):
    """The state dict of TinyLM as a per-tensor FP8 checkpoint stores it. ModelOpt: float32 0-d
    scales, KV-cache scales on k_proj/v_proj. compressed-tensors: bfloat16 [1] scales (the
    weight's dtype), KV-cache scales on the attention module."""
    ref = tiny_lm()
    g = torch.Generator().manual_seed(seed + 100)
    sd = {}
    for i, name in enumerate(QUANTIZED):
        linear = ref.get_submodule(name)
        w, s = fp8_layer(linear.out_features, linear.in_features, seed + i)
        sd[f"{name}.weight"] = w
        as_stored = (lambda t: t) if naming == "modelopt" else (lambda t: t.to(torch.bfloat16).reshape(1))
        sd[f"{name}.weight_scale"] = as_stored(s)
        if static:
            sd[f"{name}.input_scale"] = as_stored(torch.tensor(0.01 + 0.001 * i))
        if linear.bias is not None:
            sd[f"{name}.bias"] = (torch.randn(linear.out_features, generator=g) * 0.1).to(torch.bfloat16)
    for name, tensor in ref.state_dict().items():
        if not any(name.startswith(q + ".") for q in QUANTIZED):
            sd[name] = (torch.randn(tensor.shape, generator=g)).to(torch.bfloat16)
    for i in (0, 1):
        if naming == "modelopt":
            sd[f"model.layers.{i}.self_attn.k_proj.k_scale"] = torch.tensor(0.02)
            sd[f"model.layers.{i}.self_attn.v_proj.v_scale"] = torch.tensor(0.03)
        else:
            sd[f"model.layers.{i}.self_attn.k_scale"] = torch.tensor([0.02], dtype=torch.bfloat16)
            sd[f"model.layers.{i}.self_attn.v_scale"] = torch.tensor([0.03], dtype=torch.bfloat16)
    return sd


def write(folder, sd, quantization_config=None, shards=1):
    """safetensors file(s) in `folder`, with config.json (quantization_config) and, for more than
    one shard, model.safetensors.index.json."""
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted(sd)
    if shards == 1:
        save_file({n: sd[n].contiguous() for n in names}, str(folder / "model.safetensors"), metadata={"format": "pt"})
    else:
        weight_map = {}
        for s in range(shards):
            file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            part = names[s::shards]
            save_file({n: sd[n].contiguous() for n in part}, str(folder / file), metadata={"format": "pt"})
            weight_map.update({n: file for n in part})
        total = sum(t.numel() * t.element_size() for t in sd.values())
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    config = {"architectures": ["TinyLM"], "hidden_size": HIDDEN, "torch_dtype": "bfloat16"}
    if quantization_config is not None:
        config["quantization_config"] = quantization_config
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def swapped(model):
    return sorted(name for name, m in model.named_modules() if isinstance(m, Linear))


def bits(t):
    return t.contiguous().view(torch.uint8) if t.element_size() == 1 else t


def assert_loaded_as_stored(model, sd, static=True):
    assert swapped(model) == sorted(QUANTIZED)
    assert type(model.lm_head) is nn.Linear
    for name in QUANTIZED:
        layer = model.get_submodule(name)
        assert layer.weight.dtype == E4M3 and torch.equal(bits(layer.weight), bits(sd[f"{name}.weight"])), name
        assert layer.weight_scale.shape == () and layer.weight_scale.dtype == torch.float32
        assert layer.weight_scale.item() == sd[f"{name}.weight_scale"].float().item()  # exact, also from bf16
        assert layer.dynamic is not static
        if static:
            assert layer.input_scale.shape == ()
            assert layer.input_scale.item() == sd[f"{name}.input_scale"].float().item()
        if f"{name}.bias" in sd:
            assert torch.equal(layer.bias, sd[f"{name}.bias"].to(layer.out_dtype))
        else:
            assert layer.bias is None
    for name, tensor in model.state_dict().items():
        if not any(name.startswith(q + ".") for q in QUANTIZED):
            assert torch.equal(tensor.to(sd[name].dtype), sd[name]), name


# ---- what loads ---------------------------------------------------------------------------------

def test_modelopt_sharded_with_index(tmp_path, caplog):
    sd = checkpoint("modelopt")
    folder = write(tmp_path / "ckpt", sd, {**MODELOPT_CONFIG}, shards=2)
    model = tiny_lm()
    with caplog.at_level(logging.INFO, logger="fp8gemm"):
        assert load_fp8_checkpoint(model, folder) is model
    assert_loaded_as_stored(model, sd)
    assert model.model.layers[0].self_attn.q_proj.out_dtype == torch.bfloat16
    log = "\n".join(r.getMessage() for r in caplog.records)
    assert "14 layer(s) now fp8gemm.nn.Linear (14 static, 0 dynamic" in log and "modelopt FP8" in log, log
    assert "skipped 4 KV-cache scale(s)" in log and "k_proj.k_scale" in log, log


def test_compressed_tensors_bf16_scales_of_shape_1(tmp_path):
    sd = checkpoint("compressed-tensors")
    stored = sd[f"{QUANTIZED[0]}.weight_scale"]
    assert stored.shape == (1,) and stored.dtype == torch.bfloat16
    model = load_fp8_checkpoint(tiny_lm(), write(tmp_path, sd, ct_config()) / "model.safetensors")
    assert_loaded_as_stored(model, sd)


def test_compressed_tensors_dynamic_activations(tmp_path, caplog):
    sd = checkpoint("compressed-tensors", static=False)
    with caplog.at_level(logging.INFO, logger="fp8gemm"):
        model = load_fp8_checkpoint(tiny_lm(), write(tmp_path, sd, ct_config(inputs="dynamic")))
    assert_loaded_as_stored(model, sd, static=False)
    assert "dynamically per token: fp8gemm quantizes them dynamically per tensor" in caplog.text


def test_modelopt_hf_quant_config_json(tmp_path):
    sd = checkpoint("modelopt")
    folder = write(tmp_path, sd)
    (folder / "hf_quant_config.json").write_text(json.dumps({
        "producer": {"name": "modelopt", "version": "0.19.0"},
        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}))
    assert_loaded_as_stored(load_fp8_checkpoint(tiny_lm(), folder), sd)
    del sd[f"{QUANTIZED[3]}.input_scale"]  # the config says static: a layer without its input scale is refused
    with pytest.raises(ValueError, match=r"layer 'model.layers.0.self_attn.o_proj': modelopt FP8 says static "
                                         r"activation scales but '.*o_proj.input_scale' is missing"):
        load_fp8_checkpoint(tiny_lm(), write(tmp_path, sd))


def test_fp8_quant_method_per_tensor_and_no_config(tmp_path):
    sd = checkpoint("modelopt", static=False)
    write(tmp_path / "a", sd, {"quant_method": "fp8", "activation_scheme": "dynamic", "ignored_layers": ["lm_head"]})
    assert_loaded_as_stored(load_fp8_checkpoint(tiny_lm(), tmp_path / "a"), sd, static=False)
    write(tmp_path / "b", sd)  # no quantization_config: the tensors decide
    assert_loaded_as_stored(load_fp8_checkpoint(tiny_lm(), tmp_path / "b"), sd, static=False)


def test_folder_of_shards_without_index(tmp_path):
    sd = checkpoint("modelopt")
    folder = write(tmp_path, sd, MODELOPT_CONFIG, shards=2)
    (folder / "model.safetensors.index.json").unlink()
    assert_loaded_as_stored(load_fp8_checkpoint(tiny_lm(), folder), sd)
    save_file({"lm_head.weight": sd["lm_head.weight"]}, str(folder / "extra.safetensors"))
    with pytest.raises(ValueError, match="'lm_head.weight' is in more than one file"):
        load_fp8_checkpoint(tiny_lm(), folder)


def test_mapping_source_keeps_the_tensors_and_the_model_dtype():
    sd = checkpoint("modelopt")
    model = load_fp8_checkpoint(tiny_lm(torch.float16), sd)
    q = model.model.layers[0].self_attn.q_proj
    assert q.out_dtype == torch.float16 and q.bias.dtype == torch.float16
    assert q.weight.data_ptr() == sd[f"{QUANTIZED[0]}.weight"].data_ptr()  # as stored: not even copied
    f32 = load_fp8_checkpoint(tiny_lm(torch.float32), checkpoint("modelopt"))
    assert f32.model.layers[0].mlp.up_proj.out_dtype == torch.bfloat16  # float32 modules: bfloat16 out


@pytest.mark.parametrize("device", [None, "cpu"])
def test_meta_model_loads_onto_device(tmp_path, device):
    sd = checkpoint("modelopt")
    folder = write(tmp_path, sd, MODELOPT_CONFIG, shards=2)
    model = tiny_lm(device="meta")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may stay on meta
        load_fp8_checkpoint(model, folder, device=device)
    assert all(t.device.type == "cpu" for t in list(model.parameters()) + list(model.buffers()))
    assert_loaded_as_stored(model, sd)


def test_forward_shapes_on_meta_and_the_op_needs_cuda(tmp_path):
    folder = write(tmp_path, checkpoint("modelopt"), MODELOPT_CONFIG)
    model = load_fp8_checkpoint(tiny_lm(device="meta"), folder, device="meta")
    assert swapped(model) == sorted(QUANTIZED) and model.model.layers[0].mlp.up_proj.weight.is_meta
    logits = model(torch.zeros(2, 7, dtype=torch.long, device="meta"))
    assert logits.shape == (2, 7, VOCAB) and logits.dtype == torch.bfloat16
    k_proj = model.model.layers[1].self_attn.k_proj
    y = k_proj(torch.empty(3, 5, HIDDEN, dtype=torch.bfloat16, device="meta"))
    assert y.shape == (3, 5, KV) and y.dtype == torch.bfloat16
    cpu = load_fp8_checkpoint(tiny_lm(), folder)
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        cpu.model.layers[0].self_attn.q_proj(torch.ones(2, HIDDEN, dtype=torch.bfloat16))


def test_shared_layer_swaps_under_every_name():
    model = tiny_lm()
    model.model.layers[1].mlp.up_proj = model.model.layers[0].mlp.up_proj
    sd = checkpoint("modelopt")
    for name in list(sd):
        if name.startswith("model.layers.1.mlp.up_proj."):
            del sd[name]
    load_fp8_checkpoint(model, sd)
    assert isinstance(model.model.layers[1].mlp.up_proj, Linear)
    assert model.model.layers[1].mlp.up_proj is model.model.layers[0].mlp.up_proj


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_tied_embeddings_load_from_the_one_name_stored(device):
    model = tiny_lm(device=device)
    model.lm_head.weight = model.model.embed_tokens.weight
    sd = checkpoint("modelopt")
    del sd["lm_head.weight"]  # a checkpoint stores a tied tensor once
    load_fp8_checkpoint(model, sd, device="cpu")  # strict
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert torch.equal(model.lm_head.weight, sd["model.embed_tokens.weight"])


def test_already_quantized_model_loads_through_its_state_dict():
    sd = checkpoint("compressed-tensors")
    model = fp8gemm.quantize_(tiny_lm(), activation_scale=1.0)
    load_fp8_checkpoint(model, sd)
    assert_loaded_as_stored(model, sd)


def test_strict_and_non_strict():
    sd = checkpoint("modelopt")
    sd["model.extra.weight"] = torch.ones(4)
    del sd["model.norm.weight"], sd[f"{QUANTIZED[0]}.bias"]
    with pytest.raises(ValueError, match=r"layer 'model.layers.0.self_attn.q_proj': the module has a bias but "
                                         r"'.*q_proj.bias' is not in the checkpoint \(strict=True"):
        load_fp8_checkpoint(tiny_lm(), sd)
    sd[f"{QUANTIZED[0]}.bias"] = torch.zeros(HIDDEN, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match=r"does not match TinyLM \(strict=True.*missing: \['model.norm.weight'\]; "
                                           r"unexpected: \['model.extra.weight'\]"):
        load_fp8_checkpoint(tiny_lm(), sd)
    del sd[f"{QUANTIZED[0]}.bias"]
    model = tiny_lm()
    bias = model.model.layers[0].self_attn.q_proj.bias.detach().clone()
    load_fp8_checkpoint(model, sd, strict=False)  # keeps the module's bias and norm
    assert torch.equal(model.model.layers[0].self_attn.q_proj.bias, bias)


def test_package_export_and_from_fp8():
    assert "load_fp8_checkpoint" in fp8gemm.__all__ and fp8gemm.load_fp8_checkpoint is load_fp8_checkpoint
    w, s = fp8_layer(32, 64, 0)
    layer = Linear.from_fp8(w, s.reshape(1).half(), torch.tensor([0.5], dtype=torch.bfloat16),
                            torch.ones(32), out_dtype=torch.float16, backend="cutlass")
    assert layer.weight.data_ptr() == w.data_ptr() and layer.in_features == 64 and layer.out_features == 32
    assert layer.weight_scale.shape == () and layer.weight_scale.item() == s.half().item()
    assert layer.input_scale.item() == 0.5 and layer.bias.dtype == torch.float16 and layer.backend == "cutlass"
    assert Linear.from_fp8(w, s).dynamic and set(Linear.from_fp8(w, s).state_dict()) == {"weight", "weight_scale"}


@pytest.mark.parametrize("args,exc,text", [
    (lambda w, s: (w.float(), s), TypeError, "weight must be torch.float8_e4m3fn"),
    (lambda w, s: (w[0], s), ValueError, "weight must be 2-D"),
    (lambda w, s: (w, s.expand(32, 1)), ValueError, "per-channel, per-token or block scales are not supported"),
    (lambda w, s: (w, s.double()), TypeError, "weight_scale must be float32, bfloat16 or float16"),
    (lambda w, s: (w, -s), ValueError, "weight_scale must be finite and > 0"),
    (lambda w, s: (w[:, :40], s), ValueError, "in_features must be a positive multiple of 16"),
])
def test_from_fp8_errors(args, exc, text):
    w, s = fp8_layer(32, 64, 0)
    with pytest.raises(exc, match=text):
        Linear.from_fp8(*args(w, s))


def test_load_state_dict_refuses_what_would_cast_or_mismatch():
    layer = Linear(64, 32, activation_scale=1.0)
    sd = layer.state_dict()
    with pytest.raises(RuntimeError, match=r"weight_scale: fp8gemm.nn.Linear holds one per-tensor scale, the state "
                                           r"dict's has shape \(32, 1\)"):
        layer.load_state_dict({**sd, "weight_scale": torch.ones(32, 1)})
    with pytest.raises(RuntimeError, match=r"weight: fp8gemm.nn.Linear's weight must be loaded as "
                                           r"torch.float8_e4m3fn, got torch.bfloat16"):
        layer.load_state_dict({**sd, "weight": torch.ones(32, 64, dtype=torch.bfloat16)})


# ---- what is refused ----------------------------------------------------------------------------

Q = QUANTIZED[1]  # model.layers.0.self_attn.k_proj [32, 64]


def _set(name, value):
    def edit(sd):
        sd[name] = value
    return edit


def _drop(name):
    def edit(sd):
        del sd[name]
    return edit


def _retype_weight(dtype):
    def edit(sd):
        sd[f"{Q}.weight"] = sd[f"{Q}.weight"].view(torch.uint8).view(dtype) if dtype.itemsize == 1 else \
            sd[f"{Q}.weight"].to(dtype)
    return edit


@pytest.mark.parametrize("edit,exc,text", [
    (_set(f"{Q}.weight_scale", torch.ones(KV, 1)), ValueError,
     r"layer '.*k_proj': '.*k_proj.weight_scale' has shape \(32, 1\): per-channel or block weight scales are not "
     "supported"),
    (_set(f"{Q}.weight_scale_inv", torch.ones(1, 1)), ValueError, "is the naming of block-scaled FP8 checkpoints"),
    (_retype_weight(torch.float8_e5m2), TypeError,
     "the weight must be stored as torch.float8_e4m3fn, got torch.float8_e5m2 .e5m2 weights are not loaded"),
    (_retype_weight(torch.uint8), TypeError, "got torch.uint8 .FP8 bytes saved under an integer dtype"),
    (_retype_weight(torch.bfloat16), TypeError, "got torch.bfloat16 .a weight_scale next to a full-precision weight"),
    (_set(f"{Q}.weight", torch.zeros(KV, 48).to(E4M3)), ValueError,
     r"the weight has shape \(32, 48\) but the model's torch.nn.Linear\(64, 32\) needs \[out_features, "
     r"in_features\] = \(32, 64\)"),
    (_drop(f"{Q}.weight_scale"), ValueError, r"'.*k_proj.weight_scale' is missing"),
    (_set(f"{Q}.input_scale", torch.ones(4)), ValueError, "per-token or per-channel input scales are not supported"),
    (_set(f"{Q}.input_scale", torch.tensor(0.0)), ValueError, "input_scale' must be finite and > 0, got 0.0"),
    (_set(f"{Q}.weight_scale", torch.tensor(float("nan"))), ValueError, "must be finite and > 0, got nan"),
    (_set(f"{Q}.weight_scale", torch.tensor(1.0, dtype=torch.float64)), TypeError,
     "must be float32, bfloat16 or float16, got torch.float64"),
    (_set(f"{Q}.pre_quant_scale", torch.ones(HIDDEN)), ValueError,
     "'.*k_proj.pre_quant_scale' is not part of a per-tensor FP8 layer"),
    (_set(f"{Q}.weight_scale_2", torch.ones(())), ValueError, "weight_scale_2' is not part of a per-tensor FP8 layer"),
    (_set(f"{Q}.input_zero_point", torch.ones(1)), ValueError, "is not zero: asymmetric quantization"),
    (_set("model.embed_tokens.weight", torch.zeros(VOCAB, HIDDEN).to(E4M3)), TypeError,
     r"'model.embed_tokens.weight' is torch.float8_e4m3fn but the model's .* is torch.bfloat16 \(of a Embedding\): "
     "only torch.nn.Linear layers"),
])
def test_layer_errors_name_the_layer_and_the_rule(edit, exc, text):
    sd = checkpoint("modelopt")
    edit(sd)
    model = tiny_lm()
    before = swapped(model)
    with pytest.raises(exc, match=text):
        load_fp8_checkpoint(model, sd)
    assert swapped(model) == before == []  # checked before the model is touched


def test_symmetric_zero_points_are_accepted():
    sd = checkpoint("modelopt")
    sd[f"{Q}.weight_zero_point"] = torch.zeros(1, dtype=E4M3)
    sd[f"{Q}.input_zero_point"] = torch.zeros(1, dtype=torch.bfloat16)
    assert_loaded_as_stored(load_fp8_checkpoint(tiny_lm(), sd), {k: v for k, v in sd.items() if "zero" not in k})


def test_k_not_a_multiple_of_16():
    model = nn.Sequential(nn.Linear(40, 32, bias=False))
    w, s = fp8_layer(32, 40, 0)
    with pytest.raises(ValueError, match=r"layer '0': in_features=40 and out_features=32 must be multiples of 16"):
        load_fp8_checkpoint(model, {"0.weight": w, "0.weight_scale": s})


def test_fp8_for_a_linear_subclass_is_refused():
    model = nn.Sequential(nn.modules.linear.NonDynamicallyQuantizableLinear(64, 32, bias=False))
    w, s = fp8_layer(32, 64, 0)
    with pytest.raises(TypeError, match=r"'0.weight' is torch.float8_e4m3fn .* \(of a "
                                        r"NonDynamicallyQuantizableLinear\): only torch.nn.Linear layers"):
        load_fp8_checkpoint(model, {"0.weight": w, "0.weight_scale": s}, strict=False)


@pytest.mark.parametrize("config,text", [
    ({**MODELOPT_CONFIG, "quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}, "quant_algo 'FP8_PER_CHANNEL_PER_TOKEN' "
     r"\(per-channel weight scales\): fp8gemm loads quant_algo 'FP8'"),
    ({**MODELOPT_CONFIG, "quant_algo": "NVFP4"}, "quant_algo 'NVFP4': fp8gemm loads quant_algo 'FP8'"),
    (ct_config(weights=ct_args("channel"), inputs="dynamic"), "weights of strategy 'channel' "
     r"\(per-channel scales, as in the FP8_DYNAMIC preset\): fp8gemm loads per-tensor weight scales"),
    (ct_config(weights={**ct_args("block"), "block_structure": [128, 128]}, inputs="dynamic"),
     "strategy 'block' .block scales"),
    (ct_config(weights={**ct_args(), "type": "int"}), "has 8-bit int weights"),
    (ct_config(inputs=None) | {"format": "pack-quantized"}, "format 'pack-quantized'"),
    (ct_config() | {"sparsity_config": {"format": "sparse-24-bitmask"}}, "has a sparsity_config"),
    ({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
     r"weight_block_size \[128, 128\]: block-scaled FP8 \(DeepSeek-V3 style"),
    ({"quant_method": "gptq", "bits": 4}, "has quant_method 'gptq': fp8gemm loads FP8 per-tensor checkpoints only"),
])
def test_config_refusals(tmp_path, config, text):
    folder = write(tmp_path, checkpoint("modelopt"), config)
    with pytest.raises(ValueError, match=text):
        load_fp8_checkpoint(tiny_lm(), folder)


def test_source_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_fp8_checkpoint(tiny_lm(), tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"no \*.safetensors file in"):
        load_fp8_checkpoint(tiny_lm(), tmp_path)
    with pytest.raises(TypeError, match="a mapping source must map str names to tensors"):
        load_fp8_checkpoint(tiny_lm(), {"lm_head.weight": [1.0]})
    folder = write(tmp_path / "sharded", checkpoint("modelopt"), shards=2)
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    index["weight_map"]["lm_head.weight"] = "model-00009-of-00009.safetensors"
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(FileNotFoundError, match="names model-00009-of-00009.safetensors, which is not in"):
        load_fp8_checkpoint(tiny_lm(), folder)
    with pytest.raises(ValueError, match="backend must be one of"):
        load_fp8_checkpoint(tiny_lm(), {}, backend="cuda")


# ---- a Hugging Face model ------------------------------------------------------------------------

def hf_llama_checkpoint(folder, quantization_config, static=True):
    """A tiny Llama (random weights, no download) saved as a per-tensor FP8 checkpoint with its
    config.json: (config with the quantization_config, the reference model, the tensors)."""
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                      num_key_value_heads=2, vocab_size=256, num_hidden_layers=2,
                                      max_position_embeddings=64)
    torch.manual_seed(0)
    ref = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
    sd = {}
    for name, tensor in ref.state_dict().items():
        module = name.rpartition(".")[0]
        if name.endswith(".weight") and type(ref.get_submodule(module)) is nn.Linear and module != "lm_head":
            sd[name], sd[f"{module}.weight_scale"] = quantize_per_tensor(tensor)
            if static:
                sd[f"{module}.input_scale"] = torch.tensor(0.02)
        else:
            sd[name] = tensor.contiguous()
    config.quantization_config = quantization_config
    folder.mkdir(parents=True, exist_ok=True)
    save_file(sd, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config.save_pretrained(folder)
    return transformers.AutoConfig.from_pretrained(folder), ref, sd


def test_hf_llama_built_on_meta(tmp_path):
    transformers = pytest.importorskip("transformers")
    config, _, sd = hf_llama_checkpoint(tmp_path, {"quant_method": "modelopt", "quant_algo": "FP8"})
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    with pytest.warns(UserWarning, match=r"2 tensor\(s\) are still on the meta device .*rotary_emb.inv_freq"):
        load_fp8_checkpoint(model, tmp_path)  # strict: every name of the model and the checkpoint matches
    assert len(swapped(model)) == 14 and type(model.lm_head) is nn.Linear
    k_proj = model.model.layers[1].self_attn.k_proj
    assert k_proj.weight.shape == (32, 64)
    assert torch.equal(bits(k_proj.weight), bits(sd["model.layers.1.self_attn.k_proj.weight"]))
    shapes = load_fp8_checkpoint(transformers.AutoModelForCausalLM.from_config(config).to("meta"), tmp_path,
                                 device="meta")
    ids = torch.zeros(2, 5, dtype=torch.long, device="meta")
    assert shapes(input_ids=ids).logits.shape == (2, 5, 256)
