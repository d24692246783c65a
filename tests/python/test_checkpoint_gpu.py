"""fp8gemm.load_fp8_checkpoint on a GPU (skipped without CUDA): synthetic ModelOpt and
compressed-tensors checkpoints loaded onto CUDA (from a model built on the meta device), each
layer's output against a float64 reference of the stored FP8 weight and scales and of the
activations quantized by fp8gemm.scaling's rule, and the whole model's forward."""

import warnings

import pytest
import torch

from conftest import requires_gpu
from fp8gemm import load_fp8_checkpoint
from fp8gemm.nn import Linear
from fp8gemm.scaling import per_tensor_scale, quantize_e4m3
from helpers import reference

pytest.importorskip("safetensors", reason="the checkpoints are written with safetensors (a transformers dependency)")
from test_checkpoint_cpu import MODELOPT_CONFIG, QUANTIZED, VOCAB, checkpoint, ct_config, tiny_lm, write  # noqa: E402

pytestmark = requires_gpu


def assert_layer_matches_reference(layer: Linear, x: torch.Tensor) -> None:
    """y = e4m3(x / s) @ weight.T * s * weight_scale (+ bias), s = input_scale or amax(|x|) / 448,
    within the tolerance of helpers.assert_close_to_reference (bias added to the reference)."""
    y = layer(x)
    x2 = x.reshape(-1, layer.in_features)
    s = layer.input_scale if layer.input_scale is not None else per_tensor_scale(x2)
    A = quantize_e4m3(x2, s)
    ref, abs_sum = reference(A[None], layer.weight.t()[None], s, layer.weight_scale)
    ref = ref[0] + (layer.bias.double() if layer.bias is not None else 0)
    out = y.reshape(-1, layer.out_features).double()
    rtol = 2.0**-7 if y.dtype == torch.bfloat16 else 2.0**-10
    allowed = rtol * ref.abs() + 2.0**-9 * abs_sum[0] + 1e-30
    assert y.shape == x.shape[:-1] + (layer.out_features,) and y.dtype == layer.out_dtype
    assert not torch.isnan(y).any()
    ratio = ((out - ref).abs() / allowed).max().item()
    assert ratio <= 1.0, f"max |out - ref| / allowed = {ratio:.3g}"


@pytest.mark.parametrize("naming,static", [("modelopt", True), ("compressed-tensors", True),
                                           ("compressed-tensors", False)])
def test_layers_against_float64_reference(tmp_path, naming, static):
    config = MODELOPT_CONFIG if naming == "modelopt" else ct_config(inputs="static" if static else "dynamic")
    sd = checkpoint(naming, static=static)
    folder = write(tmp_path, sd, config, shards=2)
    model = load_fp8_checkpoint(tiny_lm(device="meta"), folder, device="cuda")
    assert all(t.is_cuda for t in list(model.parameters()) + list(model.buffers()))
    torch.manual_seed(0)
    for name in QUANTIZED:
        layer = model.get_submodule(name)
        assert isinstance(layer, Linear) and layer.dynamic is not static
        assert torch.equal(layer.weight.cpu().view(torch.uint8), sd[f"{name}.weight"].view(torch.uint8))
        for shape in [(5, layer.in_features), (2, 3, layer.in_features)]:
            # Scaled so that a static input_scale (0.01..0.024) neither saturates nor underflows much.
            x = (torch.randn(shape, device="cuda") * 0.5).to(torch.bfloat16)
            assert_layer_matches_reference(layer, x)


def test_model_forward_on_cuda(tmp_path):
    folder = write(tmp_path, checkpoint("modelopt"), MODELOPT_CONFIG)
    model = load_fp8_checkpoint(tiny_lm(device="meta"), folder, device="cuda")
    ids = torch.randint(0, VOCAB, (2, 9), device="cuda")
    with torch.no_grad():
        logits = model(ids)
    assert logits.shape == (2, 9, VOCAB) and logits.dtype == torch.bfloat16 and torch.isfinite(logits).all()


def test_cpu_model_moves_to_cuda_after_the_swap(tmp_path):
    folder = write(tmp_path, checkpoint("compressed-tensors"), ct_config())
    model = load_fp8_checkpoint(tiny_lm(), folder, device="cuda")
    assert model.lm_head.weight.is_cuda and model.model.layers[0].self_attn.q_proj.weight.is_cuda
    x = torch.randn(4, 64, device="cuda", dtype=torch.bfloat16)
    assert_layer_matches_reference(model.model.layers[1].self_attn.q_proj, x)


def test_hf_llama_close_to_its_dequantized_weights(tmp_path):
    """The loaded model differs from the bf16 model holding the dequantized weights only by the
    activations' e4m3 rounding."""
    transformers = pytest.importorskip("transformers")
    from test_checkpoint_cpu import hf_llama_checkpoint

    config, ref, sd = hf_llama_checkpoint(tmp_path, ct_config(inputs="dynamic"), static=False)
    with torch.no_grad():
        for name, tensor in sd.items():
            if tensor.dtype == torch.float8_e4m3fn:
                scale = sd[name.replace(".weight", ".weight_scale")]
                ref.get_parameter(name).copy_((tensor.float() * scale).to(torch.bfloat16))
    ref = ref.cuda()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rotary buffers, recomputed below
        load_fp8_checkpoint(model, tmp_path, device="cuda")
    model.model.rotary_emb = type(model.model.rotary_emb)(config).to("cuda")
    ids = torch.randint(0, 256, (2, 12), device="cuda")
    with torch.no_grad():
        want = ref(input_ids=ids).logits.float()
        got = model(input_ids=ids).logits.float()
    assert ((got - want).norm() / want.norm()).item() < 0.06  # about 0.03: the activations' e4m3 rounding alone
