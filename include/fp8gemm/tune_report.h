// Tuning decisions as text for people and as JSON for tools: what `fp8gemm tune --json` writes
// (read by tools/tables/make_default_table.py), what `fp8gemm explain` and fp8gemm.explain print.
#pragma once

#include <string>
#include <vector>

#include "fp8gemm/device.h"
#include "fp8gemm/tune.h"

namespace fp8gemm {

// {"device": {...}, "decisions": [{"key", "m_bucket", "n", "k", "a", "b", "out", "batch",
//   "alignment", "default", "floor", "choice", "default_us", "choice_us", "noise", "threshold",
//   "reason", "measured", "elapsed_ms", "candidates": [...], "excluded_backends": [...]}]}
std::string decisions_to_json(const std::vector<Decision>& decisions, const DeviceInfo& device);

// Every candidate's time and status, the noise floor, the default, the choice and the reason.
std::string explain_text(const Decision& d);

// Where a tuning run's time went: each phase_ms entry summed over the decisions, in seconds,
// largest first, the policy's phases ("rounds 64.3 s, samples 43.1 s, ...") then, after
// "timer:", the GPU timer's share of them ("capture 20.1 s, ..."), which they include.
std::string phase_summary(const std::vector<Decision>& decisions);

}  // namespace fp8gemm
