#include "backends/cudnn/plan_name.h"

#include <algorithm>
#include <charconv>

#include "fp8gemm/check.h"

namespace fp8gemm::cudnn {
namespace {

// cudnn_frontend::KnobType_t 1..32 (the values that mirror the backend's knobs), lower case.
constexpr const char* kKnobNames[] = {
    "",          "swizzle",     "tile_size",       "edge",        "multiply",     "split_k_buf",
    "tilek",     "stages",      "reduction_mode",  "split_k_slc", "idx_mode",     "specfilt",
    "kernel_cfg", "workspace",  "tile_cga_m",      "tile_cga_n",  "block_size",   "occupancy",
    "array_size_per_thread",    "split_cols",      "tile_rows",   "tile_cols",    "load_size",
    "cta_count", "stream_k",    "split_p_slc",     "tile_m",      "tile_n",       "warp_spec_cfg",
    "swap_ab",   "input_tma_enable", "output_tma_enable", "tile_cga"};
constexpr int64_t kNamedKnobs = int64_t(sizeof(kKnobNames) / sizeof(kKnobNames[0]));

constexpr const char* kRule = "a cudnn tactic is eng=<engine id>[,<knob>=<value>...] (e.g. eng=4,tile_size=3)";

int64_t parse_int(std::string_view s, std::string_view config, std::string_view what) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  FP8GEMM_REQUIRE(ec == std::errc() && end == s.data() + s.size() && !s.empty(), kInvalidArgument,
                  "cudnn tactic '", config, "': ", what, " '", s, "' is not an integer; ", kRule);
  return v;
}

int64_t knob_type(std::string_view name, std::string_view config) {
  for (int64_t t = 1; t < kNamedKnobs; ++t)
    if (name == kKnobNames[t]) return t;
  if (name.size() > 1 && name[0] == 'k') {
    int64_t t = 0;
    const auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), t);
    if (ec == std::errc() && end == name.data() + name.size() && t > 0) return t;
  }
  FP8GEMM_FAIL(kInvalidArgument, "cudnn tactic '", config, "': unknown knob '", name,
               "' (a knob is one of swizzle, tile_size, stages, ... or k<type number>)");
}

}  // namespace

std::string knob_name(int64_t type) {
  if (type > 0 && type < kNamedKnobs) return kKnobNames[type];
  return "k" + std::to_string(type);
}

std::string format_config(PlanConfig c) {
  FP8GEMM_REQUIRE(c.engine >= 0, kInvalidArgument, "cudnn tactic: engine id ", c.engine, " must be >= 0");
  std::sort(c.knobs.begin(), c.knobs.end());
  std::string out = "eng=" + std::to_string(c.engine);
  for (size_t i = 0; i < c.knobs.size(); ++i) {
    FP8GEMM_REQUIRE(i == 0 || c.knobs[i].first != c.knobs[i - 1].first, kInvalidArgument,
                    "cudnn tactic: knob ", knob_name(c.knobs[i].first), " is given twice");
    out += "," + knob_name(c.knobs[i].first) + "=" + std::to_string(c.knobs[i].second);
  }
  return out;
}

PlanConfig parse_config(std::string_view config) {
  PlanConfig c;
  size_t pos = 0;
  bool first = true;
  while (pos <= config.size()) {
    const size_t comma = std::min(config.find(',', pos), config.size());
    const std::string_view item = config.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    FP8GEMM_REQUIRE(eq != std::string_view::npos, kInvalidArgument, "cudnn tactic '", config, "': '", item,
                    "' is not key=value; ", kRule);
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (first) {
      FP8GEMM_REQUIRE(key == "eng", kInvalidArgument, "cudnn tactic '", config, "' must start with eng=; ", kRule);
      c.engine = parse_int(value, config, "engine id");
    } else {
      c.knobs.emplace_back(knob_type(key, config), parse_int(value, config, "knob value"));
    }
    first = false;
    pos = comma + 1;
  }
  const std::string canonical = format_config(c);  // also rejects a negative engine, repeated knobs
  FP8GEMM_REQUIRE(canonical == config, kInvalidArgument, "cudnn tactic '", config,
                  "' is not in canonical form; write it as '", canonical, "'");
  std::sort(c.knobs.begin(), c.knobs.end());
  return c;
}

}  // namespace fp8gemm::cudnn
