"""export_entries / import_entries / forget_entries on the GPU (skipped without CUDA): the bytes a
group exchanges give the same entries back, and another setup is refused with the reason. The
group protocol itself runs on the CPU in test_group_tune_cpu.py and on
two GPUs in bench/tp_tune.py."""

import json

import pytest
import torch

import fp8gemm
from conftest import HAS_GPU

pytestmark = pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


def test_exported_entries_come_back_byte_for_byte():
    fp8gemm.clear_cache()
    decisions = fp8gemm.tune([(16, 1024, 512), (64, 1024, 512)], key_budget_ms=20)
    keys = sorted(d["key"] for d in decisions if d["measured"])  # what the tuner stored
    assert keys
    text = fp8gemm.export_entries(keys)
    assert json.loads(text)["format"] == "fp8gemm-tune-cache"
    assert fp8gemm.export_entries() == text  # every entry: the same two
    assert json.loads(fp8gemm.export_entries([]))["entries"] == []  # the validators alone
    fp8gemm.clear_cache()
    report = fp8gemm.import_entries(text)
    assert sorted(report["added"]) == keys and report["refused"] == []
    assert fp8gemm.export_entries(keys) == text
    assert sorted(fp8gemm.import_entries(text)["unchanged"]) == keys
    assert torch.ops.fp8gemm.forget_entries(keys[:1]) == 1
    assert sorted(e["key"] for e in json.loads(fp8gemm.export_entries())["entries"]) == keys[1:]
    fp8gemm.clear_cache()


def test_entries_of_another_setup_are_refused():
    fp8gemm.clear_cache()
    fp8gemm.tune([(16, 1024, 512)], key_budget_ms=20)
    data = json.loads(fp8gemm.export_entries())
    data["validators"]["gpu_name"] = "NVIDIA H100"
    fp8gemm.clear_cache()
    with pytest.raises(ValueError, match="another setup: GPU is NVIDIA H100 in the file"):
        fp8gemm.import_entries(json.dumps(data))
    assert json.loads(fp8gemm.export_entries())["entries"] == []


def test_failed_keys_are_listed():
    assert isinstance(json.loads(torch.ops.fp8gemm.tuning_failures()), dict)
