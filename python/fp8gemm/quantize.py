"""fp8gemm.quantize_: swaps the torch.nn.Linear layers of a module tree (a Hugging Face
transformers model in particular) for fp8gemm.nn.Linear, in place."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Callable, Iterator, Optional, Tuple

import torch

from ._log import logger
from .nn import Linear

__all__ = ["quantize_"]

FilterFn = Callable[[torch.nn.Module, str], bool]


def _output_heads(model: torch.nn.Module) -> set:
    """ids of the modules that produce the logits: what get_output_embeddings() returns (Hugging
    Face models) and any module named lm_head."""
    heads = set()
    get = getattr(model, "get_output_embeddings", None)
    if callable(get):
        try:
            head = get()
        except NotImplementedError:  # transformers' base class for models without a head
            head = None
        if isinstance(head, torch.nn.Module):
            heads.add(id(head))
    for name, module in model.named_modules():
        if name.rsplit(".", 1)[-1] == "lm_head":
            heads.add(id(module))
    return heads


def linear_children(model: torch.nn.Module) -> Iterator[Tuple[torch.nn.Module, str, torch.nn.Linear, str]]:
    """(parent, child name, layer, fully qualified name) for every torch.nn.Linear of `model`
    (exactly that type: subclasses may read .weight directly), once per parent that holds it, so
    that a swap can replace a shared layer under each of its names."""
    for parent_name, parent in model.named_modules():
        for child_name, child in parent.named_children():
            if type(child) is torch.nn.Linear:
                yield parent, child_name, child, f"{parent_name}.{child_name}" if parent_name else child_name


def _scale_for(activation_scale, fqn: str):
    if isinstance(activation_scale, Mapping):
        if fqn not in activation_scale:
            raise KeyError(f"fp8gemm.quantize_: activation_scale is a mapping but has no scale for layer '{fqn}' "
                           "(give every quantized layer one, or narrow filter_fn)")
        return activation_scale[fqn]
    return activation_scale


def quantize_(model: torch.nn.Module, filter_fn: Optional[FilterFn] = None, *, activation_scale="dynamic",
              out_dtype: Optional[torch.dtype] = None, backend: str = "auto",
              include_lm_head: bool = False) -> torch.nn.Module:
    """Replaces every torch.nn.Linear of `model` (exactly that type: subclasses may read .weight
    directly) with fp8gemm.nn.Linear.from_linear(layer, ...) and returns `model`.

    filter_fn(module, fully_qualified_name) -> bool narrows the layers swapped. The output head
    (get_output_embeddings(), any module named lm_head) is kept unless include_lm_head=True.
    Layers whose in_features or out_features is not a multiple of 16 (the GEMM's rule) are kept,
    with one warning naming them. activation_scale: "dynamic", a static scale for every layer, or
    a mapping from layer name to its calibrated scale. out_dtype: None keeps each layer's weight
    dtype (bfloat16/float16; bfloat16 for float32 weights). A layer shared by several parents
    becomes one fp8gemm Linear shared the same way. The swapped model's state dict loads into
    another model swapped the same way.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"fp8gemm.quantize_: model must be a torch.nn.Module, got {type(model).__name__}")
    if filter_fn is not None and not callable(filter_fn):
        raise TypeError("fp8gemm.quantize_: filter_fn must be callable as filter_fn(module, name) -> bool")
    heads = set() if include_lm_head else _output_heads(model)
    swaps, misaligned, kept_heads = [], [], []
    for parent, child_name, child, fqn in linear_children(model):
        if id(child) in heads:
            kept_heads.append(fqn)
        elif filter_fn is None or filter_fn(child, fqn):
            if child.in_features % 16 or child.out_features % 16:
                misaligned.append(f"{fqn} ({child.in_features} -> {child.out_features})")
            else:
                swaps.append((parent, child_name, child, fqn))
    replaced = {}
    for parent, child_name, child, fqn in swaps:
        if id(child) not in replaced:
            replaced[id(child)] = Linear.from_linear(child, activation_scale=_scale_for(activation_scale, fqn),
                                                     out_dtype=out_dtype, backend=backend)
        setattr(parent, child_name, replaced[id(child)])
    if misaligned:
        warnings.warn(f"fp8gemm.quantize_: kept {len(misaligned)} nn.Linear layer(s) unquantized because in/out "
                      f"features must be multiples of 16: {', '.join(misaligned)}", stacklevel=2)
    if not replaced:
        warnings.warn("fp8gemm.quantize_: no nn.Linear layer was swapped (check filter_fn)", stacklevel=2)
    logger.info("quantize_: %d nn.Linear layer(s) now fp8gemm.nn.Linear%s", len(replaced),
                f"; kept the output head {', '.join(kept_heads)}" if kept_heads else "")
    return model
