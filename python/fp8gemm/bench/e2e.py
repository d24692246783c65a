"""End-to-end greedy decode of a transformers causal LM built from a config with random weights
(nothing is downloaded), three ways on the same weights:

  bf16        the model as built
  fp8gemm     fp8gemm.quantize_ (e4m3 weights, dynamic per-tensor activation scales): each linear
              is torch.ops.fp8gemm.linear_fp8
  torch_fp8   the same quantized layers (same FP8 weights and scales) through the torch reference
              layer (bench/torch_ref.py: scaling's quantization + torch._scaled_mm with the bias)

Each decodes the same prompts greedily with a static KV cache, every decode step replayed from a
CUDA graph (--no-graphs: eager), at each batch size, and reports tokens/s and each FP8 variant's
speed over bf16 (x_bf16 = its tokens/s / bf16's). Agreement: the FP8 variants' logits on the bf16
variant's greedy sequence (teacher forced), against bf16 and against each other: relative error,
cosine, top-1 agreement; plus how many greedy tokens match bf16's.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import statistics
import time
from typing import Dict, Optional, Sequence

import torch

import fp8gemm

from .torch_ref import ScaledMMLinear, to_torch_reference

__all__ = ["ScaledMMLinear", "run_e2e", "run_e2e_batches"]

# A Llama-3.2-1B-shaped model: what the built-in run decodes (random weights).
BUILTIN_LLAMA = dict(model_type="llama", hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                     num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
                     max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True)
# Qwen3-4B's shape (36 layers; the preset decodes 12 of them: a 3-4B-class step at a third of the time).
QWEN3_4B = dict(model_type="qwen3", hidden_size=2560, intermediate_size=9728, num_hidden_layers=36,
                num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                max_position_embeddings=40960, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True)
# --preset: (config, decoder layers it runs; None: the config's own).
PRESETS = {"llama3_2_1b": (BUILTIN_LLAMA, None), "qwen3_4b": (QWEN3_4B, 12)}
# The --dry-run model: small enough for a CPU, still GQA.
TINY_LLAMA = dict(BUILTIN_LLAMA, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=16, vocab_size=256, max_position_embeddings=256)


def load_config_dict(path: Optional[str], preset: str = "llama3_2_1b") -> dict:
    """The config.json at `path` (a file or a folder holding one), else the preset's config."""
    if path is None:
        return dict(PRESETS[preset][0])
    file = os.path.join(path, "config.json") if os.path.isdir(path) else path
    with open(file) as f:
        config = json.load(f)
    if "model_type" not in config:
        raise ValueError(f"--hf-config {file}: no model_type field (transformers needs it to pick the model class)")
    return config


def build_config(config: dict, layers: Optional[int]):
    import transformers

    config = dict(config)
    model_type = config.pop("model_type")
    for key in ("architectures", "transformers_version", "torch_dtype", "dtype", "quantization_config"):
        config.pop(key, None)
    if layers:
        config["num_hidden_layers"] = layers
    return transformers.AutoConfig.for_model(model_type, **config)


def build_variants(config, device: str, with_fp8: bool) -> Dict[str, torch.nn.Module]:
    import transformers

    torch.manual_seed(0)
    with torch.device(device):
        bf16 = transformers.AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
    bf16.eval().requires_grad_(False)
    variants = {"bf16": bf16}
    if with_fp8:
        fp8 = fp8gemm.quantize_(copy.deepcopy(bf16))
        variants.update(fp8gemm=fp8, torch_fp8=to_torch_reference(copy.deepcopy(fp8)))
    return variants


def _cache_kwarg(model) -> str:
    """transformers renamed past_key_values to cache; pass whichever this version takes."""
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


class Decoder:
    """Greedy decode with a static KV cache; one decode step is a CUDA graph when graphs=True."""

    def __init__(self, model, batch: int, prompt_len: int, new_tokens: int, graphs: bool, log=print):
        from transformers import StaticCache

        self.model, self.prompt_len, self.new_tokens = model, prompt_len, new_tokens
        self.device = next(model.parameters()).device
        self.cache = StaticCache(config=model.config, max_cache_len=prompt_len + new_tokens)
        self.kw = _cache_kwarg(model)
        self.token = torch.zeros(batch, 1, dtype=torch.long, device=self.device)
        self.position = torch.zeros(1, dtype=torch.long, device=self.device)
        self.graphs, self.graph, self.logits, self.log = graphs, None, None, log

    def _forward(self, ids, positions):
        return self.model(input_ids=ids, cache_position=positions, use_cache=True, **{self.kw: self.cache}).logits

    def _step(self):
        return self._forward(self.token, self.position)[:, -1]

    def _capture(self):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self._step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.logits = self._step()

    def _prefill(self, prompt: torch.Tensor) -> torch.Tensor:
        """The prompt's pass from an empty cache; the next step's token and position set."""
        self.cache.reset()  # in place: a captured graph keeps the cache's addresses
        logits = self._forward(prompt, torch.arange(self.prompt_len, device=self.device))[:, -1]
        self.token.copy_(logits.argmax(-1)[:, None])
        self.position.fill_(self.prompt_len)
        return logits

    @torch.no_grad()
    def run(self, prompt: torch.Tensor):
        """(the generated tokens [batch, new_tokens], the decode steps' seconds)."""
        logits = self._prefill(prompt)
        if self.graphs and self.graph is None:
            try:
                self._capture()
            except RuntimeError as e:  # the model's forward is not capturable: time it eagerly, and say so
                self.graphs, self.graph = False, None
                torch.cuda.synchronize()
                self.log(f"# {type(self.model).__name__}: CUDA graph capture failed, decoding eagerly: {e}")
            # The capture's warm-up steps wrote the cache and, where the cache counts its own length
            # (transformers' StaticCache), moved it on: start again from the prompt.
            logits = self._prefill(prompt)
        tokens = [logits.argmax(-1)]
        sync = torch.cuda.synchronize if self.device.type == "cuda" else (lambda: None)
        sync()
        start = time.perf_counter()
        for _ in range(self.new_tokens - 1):
            if self.graph is not None:
                self.graph.replay()
                logits = self.logits
            else:
                logits = self._step()
            tokens.append(logits.argmax(-1))
            self.token.copy_(tokens[-1][:, None])
            self.position.add_(1)
        sync()
        return torch.stack(tokens, 1), time.perf_counter() - start


def agreement(logits: torch.Tensor, ref: torch.Tensor) -> Dict[str, float]:
    a, b = logits.float().flatten(0, -2), ref.float().flatten(0, -2)
    return dict(rel_err=((a - b).norm() / b.norm()).item(),
                cosine=torch.nn.functional.cosine_similarity(a, b, dim=-1).mean().item(),
                top1=(a.argmax(-1) == b.argmax(-1)).float().mean().item())


def describe(config, variants, graphs: bool) -> str:
    return (f"# e2e: {config.model_type}, {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
            f"{'CUDA graphs' if graphs else 'eager'}; variants {', '.join(variants)}")


def measure(variants: Dict[str, torch.nn.Module], config, batch: int, prompt_len: int, new_tokens: int,
            repeats: int, graphs: bool, device: str, log=print) -> dict:
    """One batch size: every variant decodes the same prompts `repeats` times round-robin; tokens/s
    (median), x_bf16, and the agreement of the FP8 variants' logits."""
    log(f"# batch {batch}, prompt {prompt_len}, {new_tokens} new tokens")
    g = torch.Generator(device="cpu").manual_seed(1)
    prompt = torch.randint(0, config.vocab_size, (batch, prompt_len), generator=g).to(device)
    decoders = {name: Decoder(model, batch, prompt_len, new_tokens, graphs and device == "cuda", log)
                for name, model in variants.items()}
    seconds = {name: [] for name in decoders}
    tokens = {}
    for _ in range(repeats):  # round-robin over the variants
        for name, dec in decoders.items():
            tokens[name], s = dec.run(prompt)
            seconds[name].append(s)
    result = {"batch": batch, "variants": {}}
    steps = batch * (new_tokens - 1)
    with torch.no_grad():
        sequence = torch.cat([prompt, tokens["bf16"]], 1)
        logits = {name: model(input_ids=sequence, use_cache=False).logits[:, prompt_len - 1:-1]
                  for name, model in variants.items()}
    for name in decoders:
        s = statistics.median(seconds[name])
        row = dict(tokens_per_s=steps / s if s > 0 else float("nan"), step_ms=1e3 * s / max(new_tokens - 1, 1),
                   cuda_graphs=decoders[name].graph is not None,
                   greedy_match_bf16=(tokens[name] == tokens["bf16"]).float().mean().item())
        if name != "bf16":
            row["x_bf16"] = row["tokens_per_s"] / result["variants"]["bf16"]["tokens_per_s"]
            row.update({f"{k}_vs_bf16": v for k, v in agreement(logits[name], logits["bf16"]).items()})
        result["variants"][name] = row
    if "torch_fp8" in logits:
        result["fp8gemm_vs_torch_fp8"] = agreement(logits["fp8gemm"], logits["torch_fp8"])
    for name, row in result["variants"].items():
        extra = "".join(f"  {k} {v:.4f}" for k, v in row.items() if k not in ("tokens_per_s", "step_ms", "cuda_graphs"))
        log(f"{name:10} {row['tokens_per_s']:10.1f} tokens/s  {row['step_ms']:8.3f} ms/step{extra}")
    if "fp8gemm_vs_torch_fp8" in result:
        log("fp8gemm vs torch_fp8 logits: " + "  ".join(f"{k} {v:.5f}" for k, v in result["fp8gemm_vs_torch_fp8"].items()))
    del decoders
    return result


def run_e2e(config_dict: dict, layers: Optional[int], batch: int, prompt_len: int, new_tokens: int, repeats: int,
            graphs: bool, device: str, with_fp8: bool = True, log=print) -> dict:
    """One batch size (measure's result)."""
    config = build_config(config_dict, layers)
    variants = build_variants(config, device, with_fp8)
    log(describe(config, variants, graphs and device == "cuda"))
    return measure(variants, config, batch, prompt_len, new_tokens, repeats, graphs, device, log)


def run_e2e_batches(config_dict: dict, layers: Optional[int], batches: Sequence[int], prompt_len: int,
                    new_tokens: int, repeats: int, graphs: bool, device: str, with_fp8: bool = True,
                    label: str = "", log=print) -> dict:
    """Every batch size on one set of variants (built once); the result holds each batch's
    measure() and, per FP8 variant, its x_bf16 (tokens/s over bf16's) at each batch."""
    config = build_config(config_dict, layers)
    variants = build_variants(config, device, with_fp8)
    log(describe(config, variants, graphs and device == "cuda"))
    result = {"model": dict(label=label, model_type=config.model_type, layers=config.num_hidden_layers,
                            hidden=config.hidden_size, prompt=prompt_len, new_tokens=new_tokens),
              "batches": {}}
    for batch in batches:
        result["batches"][str(batch)] = measure(variants, config, batch, prompt_len, new_tokens, repeats, graphs,
                                                device, log)
        if device == "cuda":
            torch.cuda.empty_cache()
    for name in variants:
        if name != "bf16":
            result[f"{name}_x_bf16"] = {b: r["variants"][name]["x_bf16"] for b, r in result["batches"].items()}
            log(f"# e2e summary {label or config.model_type}: {name} x bf16 tokens/s: " +
                ", ".join(f"batch {b} {x:.3f}" for b, x in result[f"{name}_x_bf16"].items()))
    return result
