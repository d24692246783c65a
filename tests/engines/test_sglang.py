"""fp8gemm's SGLang plugin inside SGLang 0.5.23 (its own load_plugins and hook registry;
sglang_scenarios.py)."""

FP8_UTILS = "sglang.srt.layers.quantization.fp8_utils"


def test_load_plugins_routes_sglangs_fp8_entry_points_to_fp8gemm_on_sm90(run_scenario):
    result = run_scenario("sglang_scenarios", "entry_points", sm90=True)
    assert set(result.pop("patched")) >= {f"{FP8_UTILS}.apply_fp8_linear_bmm_flashinfer", f"{FP8_UTILS}.apply_fp8_linear",
                                          "sglang.kernels.ops.gemm.bmm_fp8",
                                          "sglang.srt.model_executor.model_runner.ModelRunner.load_model"}
    assert result == {"modelopt": "fp8gemm linear [3, 7, 1024]",
                      "fp8_utils.apply_fp8_linear_bmm_flashinfer": "fp8gemm linear [3, 7, 1024]",
                      "compressed_tensors": "fp8gemm linear [3, 7, 1024]", "bmm_fp8": "fp8gemm bmm [16, 7, 512]",
                      "load_model_hooked": True}


def test_other_gpus_keep_sglangs_paths(run_scenario):
    result = run_scenario("sglang_scenarios", "entry_points", sm90=False)
    assert result["patched"] == [] and not result["load_model_hooked"]
    assert all(v.startswith("engine") for k, v in result.items() if k not in ("patched", "load_model_hooked"))


def test_the_switch_restores_sglangs_paths(run_scenario):
    result = run_scenario("sglang_scenarios", "entry_points", env={"FP8GEMM_DISABLE": "1"}, sm90=True)
    assert result["patched"] == [] and not result["load_model_hooked"]
    assert all(v.startswith("engine") for k, v in result.items() if k not in ("patched", "load_model_hooked"))
