"""fp8gemm.load_fp8_checkpoint: loads an FP8 checkpoint's per-tensor layers as they are stored.

A layer of an FP8 checkpoint (NVIDIA ModelOpt quant_algo "FP8", compressed-tensors FP8 with
strategy "tensor", vLLM/AutoFP8 quant_method "fp8") is stored as

    <layer>.weight        float8_e4m3fn [out_features, in_features]
    <layer>.weight_scale  one element (0-d or [1]): weight ~ weight.float() * weight_scale
    <layer>.input_scale   one element, static activation scale: x_fp8 = e4m3(x / input_scale)
                          (absent: dynamic activation scales)

which is fp8gemm.nn.Linear's own convention, so each such torch.nn.Linear becomes an
fp8gemm.nn.Linear holding those tensors; nothing is dequantized. docs/checkpoints.md.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

import torch

from ._log import logger
from .nn import OUT_DTYPES, Linear, _check_backend
from .quantize import linear_children
from .scaling import E4M3

__all__ = ["load_fp8_checkpoint"]

# safetensors' dtype names (what a file's header says, read without loading the tensor).
_SAFETENSORS_DTYPES = {
    "F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2, "BF16": torch.bfloat16, "F16": torch.float16,
    "F32": torch.float32, "F64": torch.float64, "U8": torch.uint8, "I8": torch.int8, "I16": torch.int16,
    "I32": torch.int32, "I64": torch.int64, "BOOL": torch.bool,
}
# What a per-tensor FP8 layer stores. Zero points are accepted when all zero (symmetric).
_LAYER_LEAVES = {"weight", "weight_scale", "input_scale", "bias", "weight_zero_point", "input_zero_point"}
_ZERO_POINTS = ("weight_zero_point", "input_zero_point")
# KV-cache and attention scales (ModelOpt: k_proj.k_scale, v_proj.v_scale; compressed-tensors:
# self_attn.{k,v,q}_scale, or {k,v,q}_proj.output_scale). They set up a quantized KV cache, which
# fp8gemm does not have; no linear layer's output depends on them.
_KV_LEAVES = {"k_scale", "v_scale", "q_scale", "prob_scale", "k_bias", "v_bias"}
_KV_OUTPUT_LEAVES = {"output_scale", "output_zero_point"}
_QKV = ("q_proj", "k_proj", "v_proj")
_CT_FORMATS = (None, "float-quantized", "naive-quantized")

Source = Union[str, os.PathLike, Mapping]


def _is_float8(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point and dtype.itemsize == 1


def _is_kv_extra(name: str) -> bool:
    module, _, leaf = name.rpartition(".")
    return leaf in _KV_LEAVES or (leaf in _KV_OUTPUT_LEAVES and module.rpartition(".")[2] in _QKV)


class _Source:
    """The checkpoint's tensors by name, each read when needed: dtypes and shapes come from the
    safetensors headers, so a bf16 tensor is never loaded just to be looked at and a sharded
    checkpoint is never held whole."""

    def __init__(self, source: Source, stack: contextlib.ExitStack):
        self.folder: Optional[Path] = None
        self._tensors: Dict[str, torch.Tensor] = {}
        self._handles: Dict[str, object] = {}
        if isinstance(source, Mapping):
            for name, value in source.items():
                if not isinstance(name, str) or not isinstance(value, torch.Tensor):
                    raise TypeError("load_fp8_checkpoint: a mapping source must map str names to tensors, got "
                                    f"{name!r}: {type(value).__name__}")
            self._tensors = dict(source)
            return
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError("load_fp8_checkpoint: source must be a .safetensors file, a folder of them or a mapping of "
                            f"names to tensors, got {type(source).__name__}")
        self._open(Path(os.fspath(source)), stack)

    def _open(self, path: Path, stack: contextlib.ExitStack) -> None:
        try:
            from safetensors import safe_open
        except ImportError:
            raise ImportError("load_fp8_checkpoint: reading .safetensors files needs the safetensors package (pip "
                              "install safetensors); a mapping of names to tensors needs nothing") from None
        self.folder = path if path.is_dir() else path.parent
        files = _files_of(path)
        opened = {f: stack.enter_context(safe_open(str(f), framework="pt", device="cpu")) for f in set(files.values())}
        if isinstance(files, _Index):
            held = {f: set(handle.keys()) for f, handle in opened.items()}
            for name, f in files.items():
                if name not in held[f]:
                    raise ValueError(f"load_fp8_checkpoint: {files.path.name} maps '{name}' to {f.name}, which "
                                     "does not hold it")
                self._handles[name] = opened[f]
            return
        for f in sorted(opened):
            for name in opened[f].keys():
                if name in self._handles:
                    raise ValueError(f"load_fp8_checkpoint: '{name}' is in more than one file of {path} (give the "
                                     "folder a model.safetensors.index.json, or load one file)")
                self._handles[name] = opened[f]

    def names(self) -> List[str]:
        return list(self._handles or self._tensors)

    def dtype(self, name: str) -> torch.dtype:
        if name in self._tensors:
            return self._tensors[name].dtype
        dtype = _SAFETENSORS_DTYPES.get(self._handles[name].get_slice(name).get_dtype())
        return dtype if dtype is not None else self.get(name).dtype

    def shape(self, name: str) -> Tuple[int, ...]:
        if name in self._tensors:
            return tuple(self._tensors[name].shape)
        return tuple(self._handles[name].get_slice(name).get_shape())

    def get(self, name: str) -> torch.Tensor:
        if name in self._tensors:
            return self._tensors[name].detach()
        return self._handles[name].get_tensor(name)


class _Index(dict):
    """name -> file, from a model.safetensors.index.json (kept apart from a plain folder listing,
    whose files are checked for duplicate names instead)."""

    def __init__(self, path: Path):
        try:
            weight_map = json.loads(path.read_text())["weight_map"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"load_fp8_checkpoint: {path} is not a safetensors index (a JSON object with a "
                             f"'weight_map'): {e}") from None
        super().__init__({name: path.parent / f for name, f in weight_map.items()})
        self.path = path
        for f in set(self.values()):
            if not f.is_file():
                raise FileNotFoundError(f"load_fp8_checkpoint: {path.name} names {f.name}, which is not in "
                                        f"{path.parent}")


def _files_of(path: Path) -> Dict[str, Path]:
    """The files to read: an index's map, or {file name: file} of every *.safetensors."""
    if path.is_file():
        if path.name.endswith(".index.json"):
            return _Index(path)
        if path.suffix != ".safetensors":
            raise ValueError(f"load_fp8_checkpoint: {path} is not a .safetensors file")
        return {path.name: path}
    if not path.is_dir():
        raise FileNotFoundError(f"load_fp8_checkpoint: {path} does not exist")
    index = path / "model.safetensors.index.json"
    if index.is_file():
        return _Index(index)
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"load_fp8_checkpoint: no *.safetensors file in {path}")
    return {f.name: f for f in files}


# ---- the quantization_config cross-check --------------------------------------------------------

class _Scheme(NamedTuple):
    """What the config says: a label for the log, the activation scales it implies ("static",
    "dynamic" or None when mixed or unknown), and notes on how fp8gemm runs it."""

    label: Optional[str]
    activations: Optional[str]
    notes: List[str]


def _read_json(path: Path):
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"load_fp8_checkpoint: {path} is not valid JSON: {e}") from None


def _scheme_of(folder: Optional[Path]) -> _Scheme:
    """The quantization_config of config.json next to the checkpoint (or ModelOpt's
    hf_quant_config.json), refused unless it is FP8 per tensor."""
    if folder is None:
        return _Scheme(None, None, [])
    config = _read_json(folder / "config.json")
    qc = config.get("quantization_config") if isinstance(config, dict) else None
    where = f"{folder / 'config.json'} quantization_config"
    if qc is None:
        hf_quant = _read_json(folder / "hf_quant_config.json")
        if hf_quant is None:
            return _Scheme(None, None, [])
        qc, where = dict(hf_quant, quant_method="modelopt"), str(folder / "hf_quant_config.json")
    if not isinstance(qc, dict):
        raise ValueError(f"load_fp8_checkpoint: {where} must be a JSON object, got {type(qc).__name__}")
    method = str(qc.get("quant_method", "")).lower()
    if method.startswith("modelopt"):
        return _modelopt_scheme(qc, where)
    if method in ("compressed-tensors", "compressed_tensors"):
        return _compressed_tensors_scheme(qc, where)
    if method == "fp8":
        return _fp8_scheme(qc, where)
    raise ValueError(f"load_fp8_checkpoint: {where} has quant_method {method!r}: fp8gemm loads FP8 per-tensor "
                     "checkpoints only (quant_method 'modelopt' with quant_algo 'FP8', 'compressed-tensors' with "
                     "8-bit float weights of strategy 'tensor', or 'fp8' without weight_block_size)")


_MODELOPT_HINTS = {"FP8_PER_CHANNEL_PER_TOKEN": " (per-channel weight scales)", "FP8_PB_WO": " (block weight scales)",
                   "MIXED_PRECISION": " (a format per layer)"}


def _modelopt_scheme(qc: dict, where: str) -> _Scheme:
    algo = qc.get("quant_algo") or (qc.get("quantization") or {}).get("quant_algo")
    algo = str(algo).upper() if algo else None
    if algo != "FP8":
        raise ValueError(f"load_fp8_checkpoint: {where} has quant_method 'modelopt' with quant_algo {algo!r}"
                         f"{_MODELOPT_HINTS.get(algo, '')}: fp8gemm loads quant_algo 'FP8' (per-tensor e4m3 weights "
                         "and static input scales)")
    return _Scheme("modelopt FP8", "static", [])


def _strategy(args: dict) -> str:
    return args.get("strategy") or ("group" if args.get("group_size") else "tensor")


def _ct_weights(where: str, group: str, w) -> None:
    if not isinstance(w, dict):
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} quantizes no weights")
    if w.get("num_bits") != 8 or w.get("type") != "float":
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has {w.get('num_bits')}-bit "
                         f"{w.get('type')} weights: fp8gemm loads 8-bit float (FP8 e4m3) weights")
    strategy = _strategy(w)
    if strategy != "tensor" or w.get("block_structure"):
        hint = {"channel": " (per-channel scales, as in the FP8_DYNAMIC preset)",
                "block": " (block scales, as in FP8_BLOCK)"}.get(strategy, "")
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has weights of strategy {strategy!r}"
                         f"{hint}: fp8gemm loads per-tensor weight scales (strategy 'tensor')")
    if w.get("dynamic") not in (False, None) or w.get("symmetric") is False:
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has dynamic or asymmetric weight "
                         "scales: fp8gemm loads static symmetric per-tensor weight scales")


def _ct_inputs(where: str, group: str, a, notes: List[str]) -> str:
    if a is None:
        notes.append(f"config group {group!r} is weight-only FP8: fp8gemm quantizes its activations dynamically per "
                     "tensor")
        return "dynamic"
    if a.get("num_bits") != 8 or a.get("type") != "float":
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has {a.get('num_bits')}-bit "
                         f"{a.get('type')} input activations: fp8gemm quantizes activations to FP8 e4m3")
    dynamic, strategy = a.get("dynamic", False), _strategy(a)
    if dynamic is True:
        if strategy != "tensor":
            notes.append(f"config group {group!r} quantizes activations dynamically per {strategy}: fp8gemm "
                         "quantizes them dynamically per tensor")
        return "dynamic"
    if dynamic is not False or strategy != "tensor" or a.get("symmetric") is False:
        raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has input activations with "
                         f"dynamic={dynamic!r}, strategy={strategy!r}: fp8gemm runs dynamic scales, or static "
                         "symmetric scales per tensor")
    return "static"


def _compressed_tensors_scheme(qc: dict, where: str) -> _Scheme:
    if qc.get("format") not in _CT_FORMATS:
        raise ValueError(f"load_fp8_checkpoint: {where} has format {qc.get('format')!r}: fp8gemm loads weights stored "
                         "as float8 ('float-quantized' or 'naive-quantized')")
    for key in ("sparsity_config", "transform_config"):
        if qc.get(key):
            raise ValueError(f"load_fp8_checkpoint: {where} has a {key}: fp8gemm loads dense per-tensor FP8 "
                             "layers with no transform")
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise ValueError(f"load_fp8_checkpoint: {where} has no config_groups (what compressed-tensors quantizes)")
    activations, notes = set(), []
    for group, g in groups.items():
        if g.get("format") not in _CT_FORMATS:
            raise ValueError(f"load_fp8_checkpoint: {where} config group {group!r} has format {g.get('format')!r}: "
                             "fp8gemm loads weights stored as float8")
        _ct_weights(where, group, g.get("weights"))
        activations.add(_ct_inputs(where, group, g.get("input_activations"), notes))
    return _Scheme("compressed-tensors FP8 (tensor)", activations.pop() if len(activations) == 1 else None, notes)


def _fp8_scheme(qc: dict, where: str) -> _Scheme:
    if qc.get("weight_block_size") is not None:
        raise ValueError(f"load_fp8_checkpoint: {where} has quant_method 'fp8' with weight_block_size "
                         f"{qc['weight_block_size']}: block-scaled FP8 (DeepSeek-V3 style, weight_scale_inv) is not "
                         "loaded; fp8gemm loads per-tensor weight scales")
    scheme = qc.get("activation_scheme", "dynamic")
    if scheme not in ("static", "dynamic"):
        raise ValueError(f"load_fp8_checkpoint: {where} has activation_scheme {scheme!r}: expected 'static' or "
                         "'dynamic'")
    return _Scheme("fp8 (per tensor)", scheme, [])


# ---- the layers ---------------------------------------------------------------------------------

class _Layer(NamedTuple):
    """One FP8 layer to swap: its name in the checkpoint, the torch.nn.Linear it replaces, the
    (parent, child name, full name) of each place that holds it, the checkpoint names it
    consumes, its checked scales."""

    fqn: str
    linear: torch.nn.Linear
    holders: List[Tuple[torch.nn.Module, str, str]]
    names: Dict[str, str]
    scales: Dict[str, torch.Tensor]


def _stores_fp8(src: _Source, fqn: str, leaves: set) -> bool:
    if "weight_scale" in leaves or "weight_scale_inv" in leaves:
        return True
    return "weight" in leaves and _is_float8(src.dtype(f"{fqn}.weight"))


def _dtype_hint(dtype: torch.dtype) -> str:
    if dtype == torch.float8_e5m2:
        return " (e5m2 weights are not loaded: the layer's weights are e4m3, as FP8 checkpoints store them)"
    if dtype in (torch.uint8, torch.int8):
        return " (FP8 bytes saved under an integer dtype are not reinterpreted: save them as float8_e4m3fn)"
    if dtype.is_floating_point and dtype.itemsize > 1:
        return " (a weight_scale next to a full-precision weight: the checkpoint is not FP8-serialized)"
    return ""


def _load_scale(src: _Source, where: str, name: str, rule: str) -> torch.Tensor:
    shape, dtype = src.shape(name), src.dtype(name)
    if dtype not in (torch.float32, torch.bfloat16, torch.float16):
        raise TypeError(f"{where}: '{name}' must be float32, bfloat16 or float16, got {dtype}")
    if len(shape) > 1 or (shape and shape[0] != 1):
        raise ValueError(f"{where}: '{name}' has shape {shape}: {rule} are not supported (fp8gemm runs one scale per "
                         "tensor: 0-d or [1])")
    scale = src.get(name).to(torch.float32).reshape(())
    value = float(scale) if not scale.is_meta else 1.0
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{where}: '{name}' must be finite and > 0, got {value}")
    return scale


def _check_zero_points(src: _Source, where: str, fqn: str, leaves: set) -> None:
    for leaf in _ZERO_POINTS:
        if leaf in leaves and src.get(f"{fqn}.{leaf}").float().any():
            raise ValueError(f"{where}: '{fqn}.{leaf}' is not zero: asymmetric quantization is not supported")


def _check_layer(src: _Source, fqn: str, linear: torch.nn.Linear, leaves: set, scheme: _Scheme,
                 strict: bool) -> Tuple[Dict[str, str], Dict[str, torch.Tensor]]:
    """The checkpoint names and scales of one FP8 layer, after every rule that needs no weight
    data; raises naming the layer and the rule."""
    where = f"load_fp8_checkpoint: layer '{fqn}'"
    if "weight_scale_inv" in leaves:
        raise ValueError(f"{where}: '{fqn}.weight_scale_inv' is the naming of block-scaled FP8 checkpoints "
                         "(DeepSeek-V3, transformers' FineGrainedFP8): not loaded; fp8gemm loads per-tensor "
                         "'weight_scale' (ModelOpt, compressed-tensors)")
    unknown = sorted(leaf for leaf in leaves - _LAYER_LEAVES if not _is_kv_extra(f"{fqn}.{leaf}"))
    if unknown:
        raise ValueError(f"{where}: {', '.join(repr(f'{fqn}.{leaf}') for leaf in unknown)} is not part of a "
                         "per-tensor FP8 layer (weight, weight_scale, input_scale, bias): loading the rest would not "
                         "compute what the checkpoint means")
    if "weight" not in leaves:
        raise ValueError(f"{where}: '{fqn}.weight_scale' is in the checkpoint but '{fqn}.weight' is not")
    dtype = src.dtype(f"{fqn}.weight")
    if dtype != E4M3:
        raise TypeError(f"{where}: the weight must be stored as torch.float8_e4m3fn, got {dtype}{_dtype_hint(dtype)}")
    if "weight_scale" not in leaves:
        raise ValueError(f"{where}: the weight is float8_e4m3fn but '{fqn}.weight_scale' is missing (every FP8 layer "
                         "needs its per-tensor weight scale)")
    shape, want = src.shape(f"{fqn}.weight"), (linear.out_features, linear.in_features)
    if shape != want:
        raise ValueError(f"{where}: the weight has shape {shape} but the model's torch.nn.Linear({linear.in_features}, "
                         f"{linear.out_features}) needs [out_features, in_features] = {want}")
    if linear.in_features % 16 or linear.out_features % 16:
        raise ValueError(f"{where}: in_features={linear.in_features} and out_features={linear.out_features} must be "
                         "multiples of 16 (the FP8 GEMM's rule for k and n)")
    scales = {"weight_scale": _load_scale(src, where, f"{fqn}.weight_scale", "per-channel or block weight scales")}
    if "input_scale" in leaves:
        scales["input_scale"] = _load_scale(src, where, f"{fqn}.input_scale", "per-token or per-channel input scales")
    elif scheme.activations == "static":
        raise ValueError(f"{where}: {scheme.label} says static activation scales but '{fqn}.input_scale' is missing")
    _check_zero_points(src, where, fqn, leaves)
    names = {role: f"{fqn}.{role}" for role in ("weight", "weight_scale", "input_scale") if role in leaves}
    names.update({leaf: f"{fqn}.{leaf}" for leaf in _ZERO_POINTS if leaf in leaves})
    if linear.bias is not None:
        if "bias" in leaves:
            names["bias"] = f"{fqn}.bias"
        elif strict or linear.bias.is_meta:
            raise ValueError(f"{where}: the module has a bias but '{fqn}.bias' is not in the checkpoint"
                             + (" (strict=True; strict=False keeps the module's bias)" if strict else
                                " and the module's bias is on the meta device (nothing to keep)"))
    return names, scales


def _plan(model: torch.nn.Module, src: _Source, leaves: Dict[str, set], scheme: _Scheme,
          strict: bool) -> List[_Layer]:
    """Every torch.nn.Linear the checkpoint stores in FP8, checked before the model is touched.
    A layer held under several names swaps under all of them, from the first name that has FP8
    tensors."""
    held: Dict[int, Tuple[torch.nn.Linear, list]] = {}
    for parent, child_name, child, fqn in linear_children(model):
        held.setdefault(id(child), (child, []))[1].append((parent, child_name, fqn))
    layers = []
    for linear, holders in held.values():
        fqn = next((f for _, _, f in holders if _stores_fp8(src, f, leaves.get(f, set()))), None)
        if fqn is not None:
            names, scales = _check_layer(src, fqn, linear, leaves.get(fqn, set()), scheme, strict)
            layers.append(_Layer(fqn, linear, holders, names, scales))
    return layers


def _check_rest(model: torch.nn.Module, src: _Source, rest: List[str], model_keys: dict) -> None:
    """A float8 tensor for a parameter that is not float8 would be cast without its scale."""
    for name in rest:
        target = model_keys.get(name)
        if target is None or _is_float8(target.dtype) or not _is_float8(src.dtype(name)):
            continue
        module = name.rpartition(".")[0]
        kind = type(model.get_submodule(module)).__name__
        raise TypeError(f"load_fp8_checkpoint: '{name}' is {src.dtype(name)} but the model's '{name}' is "
                        f"{target.dtype} (of a {kind}): only torch.nn.Linear layers (exactly that type) load as FP8; "
                        "another module would take the FP8 values without their scale")


def _build(src: _Source, layer: _Layer, backend: str, device: torch.device) -> Linear:
    linear, names = layer.linear, layer.names
    out_dtype = linear.weight.dtype if linear.weight.dtype in OUT_DTYPES else torch.bfloat16
    bias = src.get(names["bias"]) if "bias" in names else linear.bias
    new = Linear.from_fp8(src.get(names["weight"]), layer.scales["weight_scale"], layer.scales.get("input_scale"),
                          bias, out_dtype=out_dtype, backend=backend)
    return new.to(device)


def _target_device(model: torch.nn.Module, device) -> torch.device:
    if device is not None:
        return torch.device(device)
    for t in list(model.parameters()) + list(model.buffers()):
        if not t.is_meta:
            return t.device
    return torch.device("cpu")


def _has_meta(model: torch.nn.Module) -> bool:
    return any(t.is_meta for t in list(model.parameters()) + list(model.buffers()))


def _few(names: List[str], limit: int = 10) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _tensor_slot(model: torch.nn.Module, name: str) -> Tuple[torch.nn.Module, str]:
    module, _, leaf = name.rpartition(".")
    return model.get_submodule(module), leaf


def _load_rest(model, src, rest, swapped_keys, model_keys, device, strict) -> None:
    """load_state_dict for everything but the FP8 layers: copied into the model's tensors, or,
    for a model on the meta device, assigned as stored (on `device`). A tensor the model holds
    under several names (tied embeddings) is loaded from whichever name the checkpoint has, and
    stays tied when assigned."""
    assign = _has_meta(model)
    state = {name: (src.get(name).to(device) if assign else src.get(name)) for name in rest}
    result = model.load_state_dict(state, strict=False, assign=assign)
    by_tensor: Dict[int, List[str]] = {}
    for name, tensor in model_keys.items():
        by_tensor.setdefault(id(tensor), []).append(name)
    missing = []
    for key in result.missing_keys:
        loaded = next((n for n in by_tensor.get(id(model_keys.get(key)), ()) if n in state), None)
        if loaded is not None and assign:
            module, leaf = _tensor_slot(model, loaded)
            setattr(*_tensor_slot(model, key), getattr(module, leaf))
        elif loaded is None and key not in swapped_keys:
            missing.append(key)
    unexpected = list(result.unexpected_keys)
    if strict and (missing or unexpected):
        raise RuntimeError(f"load_fp8_checkpoint: the checkpoint does not match {type(model).__name__} (strict=True; "
                           f"strict=False loads what matches): missing: [{_few(missing)}]; unexpected: "
                           f"[{_few(unexpected)}]")


def load_fp8_checkpoint(model: torch.nn.Module, source: Source, *, strict: bool = True, backend: str = "auto",
                        device: Optional[Union[str, torch.device, int]] = None) -> torch.nn.Module:
    """Loads `source` into `model` (in place) and returns it. Every torch.nn.Linear (exactly that
    type) whose `<name>.weight` the checkpoint stores as float8_e4m3fn with a one-element
    `<name>.weight_scale` becomes fp8gemm.nn.Linear.from_fp8 of those tensors: static when
    `<name>.input_scale` is there, dynamic otherwise; the module's bias from `<name>.bias`;
    out_dtype the module's weight dtype when bfloat16/float16, else bfloat16. The rest loads with
    load_state_dict (`strict` as there). No weight is dequantized or copied to full precision.

    source: a .safetensors file, a folder of them (with or without model.safetensors.index.json),
    or a mapping from names to tensors. A config.json quantization_config (or ModelOpt's
    hf_quant_config.json) next to the files must say FP8 per tensor: modelopt quant_algo "FP8",
    compressed-tensors 8-bit float weights of strategy "tensor", or "fp8" without
    weight_block_size. KV-cache scales (k_scale, v_scale, ...) that the model has no tensor for are
    skipped with a log line, also under strict: fp8gemm does not quantize the KV cache.

    device: where the model ends up (default: where it is; the CPU for a model on the meta
    device, whose tensors are then assigned as stored). A model not on meta is moved after the
    swap, so the replaced full-precision weights never move. Every rule that needs no weight data
    (dtypes, shapes, scales, the config) is checked before the model is touched; errors name the
    layer and the rule. docs/checkpoints.md."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"load_fp8_checkpoint: model must be a torch.nn.Module, got {type(model).__name__}")
    _check_backend(backend)
    target = _target_device(model, device)
    with contextlib.ExitStack() as stack:
        src = _Source(source, stack)
        scheme = _scheme_of(src.folder)
        leaves: Dict[str, set] = {}
        for name in src.names():
            module, _, leaf = name.rpartition(".")
            leaves.setdefault(module, set()).add(leaf)
        model_keys = model.state_dict(keep_vars=True)
        layers = _plan(model, src, leaves, scheme, strict)
        consumed = {name for layer in layers for name in layer.names.values()}
        skipped = [n for n in src.names() if n not in consumed and n not in model_keys and _is_kv_extra(n)]
        consumed.update(skipped)
        rest = [n for n in src.names() if n not in consumed]
        _check_rest(model, src, rest, model_keys)
        swapped_keys = set()
        for layer in layers:
            new = _build(src, layer, backend, target)
            for parent, child_name, fqn in layer.holders:
                setattr(parent, child_name, new)
                swapped_keys.update(f"{fqn}.{key}" for key in new.state_dict())
        _load_rest(model, src, rest, swapped_keys, model_keys, target, strict)
    if device is not None and not _has_meta(model):
        model.to(target)  # what load_state_dict copied in place (or a meta model's real buffers)
    _report(model, layers, rest, skipped, scheme, target)
    return model


def _report(model, layers, rest, skipped, scheme, target) -> None:
    static = sum("input_scale" in layer.scales for layer in layers)
    if scheme.label and not layers:
        warnings.warn(f"load_fp8_checkpoint: the config says {scheme.label} but no torch.nn.Linear of the model has "
                      "FP8 tensors in the checkpoint (do the names match the model's?)", stacklevel=3)
    if target.type != "meta":
        left = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
        if left:
            warnings.warn(f"load_fp8_checkpoint: {len(left)} tensor(s) are still on the meta device (not in the "
                          f"checkpoint; non-persistent buffers such as rotary inv_freq must be recomputed): "
                          f"{_few(left, 5)}", stacklevel=3)
    for note in scheme.notes:
        logger.info("load_fp8_checkpoint: %s", note)
    logger.info("load_fp8_checkpoint: %d layer(s) now fp8gemm.nn.Linear (%d static, %d dynamic activation scales)%s; "
                "%d other tensor(s) loaded%s", len(layers), static, len(layers) - static,
                f" from {scheme.label}" if scheme.label else "", len(rest),
                f"; skipped {len(skipped)} KV-cache scale(s) fp8gemm does not use: {_few(skipped, 4)}" if skipped
                else "")
