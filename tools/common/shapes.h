// The performance suite (docs/perf.md "The suite") as presets of named (N, K) layers, and the one
// grammar of M values every command's --m takes ("1,8,64", "1:16384:x2", "16:128:+16", "suite",
// "buckets"). Layer names (model.layer) stay the same across releases, so results of different runs
// can be joined on them. python/fp8gemm/suite.py holds the same presets for Python (a CPU test
// keeps the two equal).
#pragma once

#include <cstdint>
#include <iosfwd>
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

// --hf-config's value: "PATH" or "PATH:tp=N" (a config.json or a folder holding one; N >= 1,
// 1 when absent). Throws Error(kInvalidArgument) for an empty path or a bad N.
struct HfConfigSpec {
  std::string path;
  int tp = 1;
};
HfConfigSpec parse_hf_config_spec(const std::string& spec);

// The layers of one --hf-config value: the config's linears at its TP degree
// (linears_from_hf_config, include/fp8gemm/models.h), named "MODEL.LINEAR" or, at tp > 1,
// "MODEL_tpN.LINEAR", where MODEL is the file's stem, or the folder's name for a folder or a file
// named config.json. Prints every linear (name, N, K, parallel style, layers holding it) and the
// parser's notes to `os`; a linear fp8gemm cannot run is printed as skipped and left out. Throws
// Error(kInvalidArgument) naming --hf-config for a config the parser refuses or one with no
// linear fp8gemm can run.
std::vector<NamedShape> hf_config_shapes(const std::string& spec, std::ostream& os);

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
