#include "tools/common/shapes.h"

#include <algorithm>
#include <charconv>

#include "fp8gemm/check.h"
#include "fp8gemm/tune.h"

namespace fp8gemm {

namespace {

struct Preset {
  const char* name;
  std::vector<NamedShape> layers;
};

// The suite of docs/perf.md "The suite"; layer names are model.layer (nemoH8b.*, nano9b.*).
const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"llama8b",
       {{"llama8b.qkv", 6144, 4096}, {"llama8b.o", 4096, 4096}, {"llama8b.gate_up", 28672, 4096},
        {"llama8b.down", 4096, 14336}}},
      {"llama70b",
       {{"llama70b.qkv", 10240, 8192}, {"llama70b.o", 8192, 8192}, {"llama70b.gate_up", 57344, 8192},
        {"llama70b.down", 8192, 28672}}},
      {"llama70b_tp8",
       {{"llama70b_tp8.qkv", 1280, 8192}, {"llama70b_tp8.o", 8192, 1024}, {"llama70b_tp8.gate_up", 7168, 8192},
        {"llama70b_tp8.down", 8192, 3584}}},
      {"nemotronh8b",
       {{"nemoH8b.up", 21504, 4096}, {"nemoH8b.down", 4096, 21504}, {"nemoH8b.in_proj", 18560, 4096},
        {"nemoH8b.out_proj", 4096, 8192}}},
      {"nano9b",
       {{"nano9b.qkv", 7168, 4480}, {"nano9b.up", 15680, 4480}, {"nano9b.down", 4480, 15680},
        {"nano9b.in_proj", 22656, 4480}}},
      {"nemotron3super",
       {{"nemotron3super.qkv", 4608, 4096}, {"nemotron3super.shared_up", 5376, 4096},
        {"nemotron3super.shared_down", 4096, 5376}}},
  };
  return all;
}

// Whole-string decimal integer; false on anything else (sign, spaces, overflow).
bool parse_int(const std::string& s, int64_t& v) {
  if (s.empty() || s[0] == '+' || s[0] == '-') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

constexpr int64_t kMaxM = 2147483647;  // M and its products must fit in 32 bits (core/validate.cpp)
constexpr size_t kMaxMValues = 4096;  // a spec that expands further is surely a typo
constexpr const char* kMForms = "accepted: a value (64), suite, buckets, lo:hi:xF (1:16384:x2), lo:hi:+S (16:128:+16)";

void add_range(const std::string& item, std::vector<int64_t>& out) {
  const std::vector<std::string> parts = split(item, ':');
  int64_t lo = 0, hi = 0, step = 0;
  FP8GEMM_REQUIRE(parts.size() == 3, kInvalidArgument, "--m: range '", item, "' needs lo:hi:step; ", kMForms);
  FP8GEMM_REQUIRE(parse_int(parts[0], lo) && parse_int(parts[1], hi) && lo >= 1 && hi >= lo && hi <= kMaxM,
                  kInvalidArgument, "--m: range '", item, "' needs integers 1 <= lo <= hi <= ", kMaxM, "; ", kMForms);
  const std::string& s = parts[2];
  const bool geometric = !s.empty() && (s[0] == 'x' || s[0] == '*');
  const std::string digits = !s.empty() && (geometric || s[0] == '+') ? s.substr(1) : s;
  FP8GEMM_REQUIRE(parse_int(digits, step) && step >= (geometric ? 2 : 1) && step <= kMaxM, kInvalidArgument,
                  "--m: range '", item, "' has a bad step '", s, "' (xF with 2 <= F <= ", kMaxM, ", or +S with 1 <= S <= ",
                  kMaxM, "); ", kMForms);
  // The next value is computed only when it stays <= hi: nothing overflows.
  for (int64_t v = lo;;) {
    out.push_back(v);
    FP8GEMM_REQUIRE(out.size() <= kMaxMValues, kInvalidArgument, "--m: '", item, "' gives more than ",
                    kMaxMValues, " values");
    if (geometric ? v > hi / step : step > hi - v) break;
    v = geometric ? v * step : v + step;
  }
}

}  // namespace

const char* const kMSpecHelp =
    "M values, comma-separated: values (1,8,64), lo:hi:xF (1:16384:x2), lo:hi:+S (16:128:+16), suite (the "
    "performance suite's 20) or buckets (every M bucket edge up to 16384)";

const std::vector<std::string>& model_preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Preset& p : presets()) n.push_back(p.name);
    n.push_back("all");
    return n;
  }();
  return names;
}

std::vector<NamedShape> model_shapes(const std::string& preset) {
  std::vector<NamedShape> out;
  for (const Preset& p : presets())
    if (preset == "all" || preset == p.name) out.insert(out.end(), p.layers.begin(), p.layers.end());
  if (out.empty()) {
    std::string known;
    for (const std::string& n : model_preset_names()) known += (known.empty() ? "" : ", ") + n;
    FP8GEMM_FAIL(kInvalidArgument, "--model: unknown preset '", preset, "'; known: ", known);
  }
  return out;
}

NamedShape parse_shape(const std::string& spec) {
  const char sep = spec.find(',') != std::string::npos ? ',' : 'x';
  const std::vector<std::string> parts = split(spec, sep);
  NamedShape s;
  FP8GEMM_REQUIRE(parts.size() == 2 && parse_int(trim(parts[0]), s.n) && parse_int(trim(parts[1]), s.k) &&
                      s.n >= 1 && s.k >= 1,
                  kInvalidArgument, "--shape: '", spec, "' is not N,K with positive integers (e.g. 6144,4096)");
  s.name = std::to_string(s.n) + "x" + std::to_string(s.k);
  return s;
}

const std::vector<int64_t>& suite_m_values() {
  static const std::vector<int64_t> m = {1,   2,   4,   8,   16,  24,   32,   48,   64,   96,
                                         128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384};
  return m;
}

std::vector<int64_t> parse_m_spec(const std::string& spec) {
  std::vector<int64_t> out;
  for (const std::string& raw : split(spec, ',')) {
    const std::string item = trim(raw);
    int64_t v = 0;
    if (item == "suite") {
      out.insert(out.end(), suite_m_values().begin(), suite_m_values().end());
    } else if (item == "buckets") {
      // Every M bucket edge up to the suite's largest M: tuning these covers every M in
      // [1, 16384] with a measured choice (the suite's M values are among them).
      for (int64_t e : m_bucket_edges())
        if (e <= suite_m_values().back()) out.push_back(e);
    } else if (item.find(':') != std::string::npos) {
      add_range(item, out);
    } else {
      FP8GEMM_REQUIRE(parse_int(item, v) && v >= 1 && v <= kMaxM, kInvalidArgument, "--m: '", item,
                      "' is not an integer in [1, ", kMaxM, "]; ", kMForms);
      out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fp8gemm
