"""fp8gemm inside serving engines: plugins that the engines load by entry point.

  fp8gemm.integrations.vllm    vLLM's `vllm.general_plugins`: a scaled-mm kernel class for
                               per-tensor FP8 layers, first in vLLM's CUDA FP8 kernel list.
  fp8gemm.integrations.sglang  SGLang's `sglang.srt.plugins`: hooks on its per-tensor FP8 linear
                               paths and its batched bmm_fp8.

Both act on SM90 only and step aside with FP8GEMM_DISABLE=1. Each records the layer shapes it
takes over and, after the model is loaded and before CUDA graphs are captured, tunes them over
every M bucket up to the engine's largest batch (with the tensor-parallel group), then logs one
line per layer shape naming the tactic fp8gemm runs. docs/integrations.md.

Importing this package imports no engine; each adapter imports its engine when the engine calls it.
"""

from ._common import DISABLE_ENV, LayerShape, disabled, recorded_layers, warm_up

__all__ = ["DISABLE_ENV", "LayerShape", "disabled", "recorded_layers", "warm_up"]
