"""fp8gemm's vLLM plugin inside vLLM 0.34.0 (its own plugin loader and kernel selection, on a faked
SM90 platform; vllm_scenarios.py)."""

import pytest

KERNEL = "Fp8gemmScaledMMLinearKernel"  # vLLM's own list starts with FlashInfer's (SM100+), then CUTLASS


@pytest.mark.parametrize("activation", ["static", "dynamic"])
def test_vllm_selects_fp8gemm_for_per_tensor_layers_on_sm90(run_scenario, activation):
    result = run_scenario("vllm_scenarios", "choose", activation=activation)
    assert result == {"first": KERNEL, "chosen": KERNEL}


def test_vllm_keeps_its_own_kernel_for_per_token_activations(run_scenario):
    result = run_scenario("vllm_scenarios", "choose", activation="per_token")
    assert result == {"first": KERNEL, "chosen": "CutlassFP8ScaledMMLinearKernel"}


def test_the_switch_restores_vllms_kernel_list(run_scenario):
    result = run_scenario("vllm_scenarios", "choose", env={"FP8GEMM_DISABLE": "1"}, activation="static")
    assert result == {"first": "FlashInferFP8ScaledMMLinearKernel", "chosen": "CutlassFP8ScaledMMLinearKernel"}


def test_is_supported_with_and_without_a_capability(run_scenario):
    result = run_scenario("vllm_scenarios", "is_supported")
    assert result["none"] == [True, None] and result["90"] == [True, None]
    assert result["100"][0] is False and "SM90" in result["100"][1] and result["89"][0] is False


def test_apply_weights_runs_fp8gemms_op_and_records_the_layer(run_scenario):
    result = run_scenario("vllm_scenarios", "apply_weights")
    for activation in ("static", "dynamic"):
        assert result[activation] == {"kernel": KERNEL, "shape": [3, 7, 1024], "dtype": "torch.bfloat16"}
    assert result["recorded"] == [[1024, 512, "static+bias"], [1024, 512, "dynamic+bias"]]
    assert result["warm_up_order"] == [["fp8gemm warm_up", "vllm", 8192], ["vllm kernel warm-up and CUDA-graph capture"]]
