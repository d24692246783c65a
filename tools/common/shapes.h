// The docs/design.md performance suite as presets of named (N, K) layers, and the one grammar of M
// values every command's --m takes ("1,8,64", "1:16384:x2", "16:128:+16", "suite", "buckets").
// Layer names match the baselines' CSVs (../shared/baselines) where they overlap, so results can
// be joined with them. python/fp8gemm/suite.py holds the same presets for Python (a CPU test
// keeps the two equal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fp8gemm {

struct NamedShape {
  std::string name;  // "llama8b.qkv"; for --shape N,K: "NxK"
  int64_t n = 0;
  int64_t k = 0;
};

// "llama8b", "llama70b", "llama70b_tp8", "nemotronh8b", "nano9b", "nemotron3super", "all".
const std::vector<std::string>& model_preset_names();

// The layers of a preset ("all": every preset's, in the order above). Throws
// Error(kInvalidArgument) naming the known presets.
std::vector<NamedShape> model_shapes(const std::string& preset);

// "N,K" (or "NxK") with N, K >= 1. Throws Error(kInvalidArgument) saying what was expected.
NamedShape parse_shape(const std::string& spec);

// {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384}
const std::vector<int64_t>& suite_m_values();

// --m's help: the accepted forms, as parse_m_spec reads them.
extern const char* const kMSpecHelp;

// Comma-separated items, each a value, "suite", "buckets" (every M bucket edge up to the suite's
// largest M), a geometric range "lo:hi:xF" (F >= 2) or an arithmetic range "lo:hi:+S" /
// "lo:hi:S" (S >= 1). Ranges include lo and stop at or before hi.
// Returns the values sorted ascending without duplicates; every value >= 1. Throws
// Error(kInvalidArgument) naming the bad item and the accepted forms.
std::vector<int64_t> parse_m_spec(const std::string& spec);

}  // namespace fp8gemm
