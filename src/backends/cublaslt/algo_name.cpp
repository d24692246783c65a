#include "backends/cublaslt/algo_name.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "fp8gemm/check.h"

namespace fp8gemm::cublaslt {

namespace {

struct EnumName {
  uint32_t value;
  const char* name;
};
#include "cublaslt_enum_names.inc"

uint64_t parse_uint(std::string_view field, std::string_view s) {
  FP8GEMM_REQUIRE(!s.empty() && s.size() <= 10 && s.find_first_not_of("0123456789") == std::string_view::npos,
                  kInvalidArgument, "cublaslt tactic: ", field, " must be a non-negative integer, got '", s, "'");
  return std::stoull(std::string(s));
}

template <size_t N>
std::string enum_to_name(const EnumName (&table)[N], uint32_t v) {
  for (const EnumName& e : table)
    if (e.value == v) return e.name;
  return "#" + std::to_string(v);  // a value newer than our header: still round-trips
}

template <size_t N>
uint32_t name_to_enum(const EnumName (&table)[N], std::string_view field, std::string_view s) {
  if (!s.empty() && s[0] == '#') return uint32_t(parse_uint(field, s.substr(1)));
  for (const EnumName& e : table)
    if (s == e.name) return e.value;
  FP8GEMM_FAIL(kInvalidArgument, "cublaslt tactic: unknown ", field, " '", s, "'");
}

template <typename T>
void get_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, T& out) {
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &out, sizeof(T), &written) != CUBLAS_STATUS_SUCCESS)
    FP8GEMM_FAIL(kCuda, "cublasLtMatmulAlgoConfigGetAttribute(", int(attr), ") failed");
}

template <typename T>
void set_attr(cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr, const T& v) {
  if (cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &v, sizeof(T)) != CUBLAS_STATUS_SUCCESS)
    FP8GEMM_FAIL(kInvalidArgument, "cublaslt tactic: the algorithm rejects config attribute ", int(attr),
                 " = ", uint64_t(v));
}

}  // namespace

bool AlgoConfig::operator==(const AlgoConfig& o) const {
  auto key = [](const AlgoConfig& c) {
    return std::tie(c.algo_id, c.tile, c.stages, c.splitk, c.reduction, c.swizzle, c.custom, c.inner,
                    c.cluster, c.fast_accum, c.fit_rows, c.fit_parts);
  };
  return key(*this) == key(o);
}

int64_t fitted_height(int64_t m, uint32_t parts) {
  const int64_t h = (std::max<int64_t>(m, 1) + parts - 1) / parts;
  return (h + 7) / 8 * 8;
}

bool tile_enum(uint32_t rows, uint32_t cols, uint32_t& tile) {
  const std::string name = std::to_string(rows) + "x" + std::to_string(cols);
  for (const EnumName& e : kTileNames)
    if (name == e.name) {
      tile = e.value;
      return true;
    }
  return false;
}

namespace {
// "<rows>x<cols>" of a tile enum's name, or {0, 0}.
std::pair<uint32_t, uint32_t> tile_dims(uint32_t tile) {
  for (const EnumName& e : kTileNames)
    if (e.value == tile) {
      unsigned r = 0, c = 0;
      char tail = 0;
      if (std::sscanf(e.name, "%ux%u%c", &r, &c, &tail) == 2) return {r, c};
    }
  return {0, 0};
}
}  // namespace

uint32_t tile_rows(uint32_t tile) { return tile_dims(tile).first; }
uint32_t tile_cols(uint32_t tile) { return tile_dims(tile).second; }

bool fit_to_m(const AlgoConfig& fixed, int64_t m, AlgoConfig& fitted) {
  const auto [rows, cols] = tile_dims(fixed.tile);
  if (fixed.fitted() || rows == 0 || cols == 0) return false;
  const int64_t parts = (m + cols - 1) / cols;
  if (parts < 1 || parts > int64_t(kMaxFitParts) || fitted_height(m, uint32_t(parts)) != int64_t(cols)) return false;
  fitted = fixed;
  fitted.tile = 0;
  fitted.fit_rows = rows;
  fitted.fit_parts = uint32_t(parts);
  return true;
}

bool resolve_at_m(const AlgoConfig& c, int64_t m, uint32_t extra, AlgoConfig& fixed) {
  fixed = c;
  if (!c.fitted()) return extra == 0;
  fixed.fit_rows = fixed.fit_parts = 0;
  return tile_enum(c.fit_rows, uint32_t(fitted_height(m, c.fit_parts)) + extra, fixed.tile);
}

int64_t same_tiles_up_to(const AlgoConfig& c, int64_t m) {
  if (c.fitted()) return std::max(m, int64_t(c.fit_parts) * fitted_height(m, c.fit_parts));
  const int64_t height = tile_cols(c.tile);
  if (height <= 0) return m;
  return (m + height - 1) / height * height;
}

std::string format_config(const AlgoConfig& c) {
  std::ostringstream os;
  os << "algo=" << c.algo_id << ",tile=";
  if (c.fitted())
    os << c.fit_rows << "xM/" << c.fit_parts;
  else
    os << enum_to_name(kTileNames, c.tile);
  os << ",stages=" << enum_to_name(kStagesNames, c.stages) << ",splitk=" << c.splitk
     << ",red=" << c.reduction << ",swizzle=" << c.swizzle << ",custom=" << c.custom
     << ",inner=" << c.inner << ",cluster=" << enum_to_name(kClusterNames, c.cluster)
     << ",fast_accum=" << (c.fast_accum ? 1 : 0);
  return os.str();
}

AlgoConfig parse_config(std::string_view config) {
  // Every field is required, in the canonical order: a name means exactly one kernel.
  static const char* kFields[] = {"algo", "tile", "stages", "splitk", "red", "swizzle",
                                  "custom", "inner", "cluster", "fast_accum"};
  std::vector<std::string_view> values;
  size_t pos = 0;
  for (const char* field : kFields) {
    const std::string prefix = std::string(field) + "=";
    FP8GEMM_REQUIRE(pos <= config.size() && config.substr(pos, prefix.size()) == prefix, kInvalidArgument,
                    "cublaslt tactic '", config, "': expected '", prefix, "' at position ", pos);
    pos += prefix.size();
    size_t end = config.find(',', pos);
    if (end == std::string_view::npos) end = config.size();
    values.push_back(config.substr(pos, end - pos));
    pos = end + 1;
  }
  FP8GEMM_REQUIRE(pos >= config.size(), kInvalidArgument, "cublaslt tactic '", config,
                  "': unexpected text after fast_accum");
  AlgoConfig c;
  c.algo_id = int32_t(parse_uint("algo", values[0]));
  if (const size_t fit = values[1].find("xM/"); fit != std::string_view::npos) {
    c.fit_rows = uint32_t(parse_uint("tile rows", values[1].substr(0, fit)));
    c.fit_parts = uint32_t(parse_uint("tile parts", values[1].substr(fit + 3)));
    FP8GEMM_REQUIRE(c.fit_rows > 0 && c.fit_parts >= 1 && c.fit_parts <= kMaxFitParts, kInvalidArgument,
                    "cublaslt tactic: a fitted tile is <rows>xM/<parts> with rows > 0 and parts 1..", kMaxFitParts,
                    ", got '", values[1], "'");
  } else {
    c.tile = name_to_enum(kTileNames, "tile", values[1]);
  }
  c.stages = name_to_enum(kStagesNames, "stages", values[2]);
  c.splitk = int32_t(parse_uint("splitk", values[3]));
  FP8GEMM_REQUIRE(c.splitk >= 1, kInvalidArgument, "cublaslt tactic: splitk must be >= 1");
  c.reduction = uint32_t(parse_uint("red", values[4]));
  c.swizzle = uint32_t(parse_uint("swizzle", values[5]));
  c.custom = uint32_t(parse_uint("custom", values[6]));
  c.inner = uint16_t(parse_uint("inner", values[7]));
  c.cluster = uint16_t(name_to_enum(kClusterNames, "cluster", values[8]));
  const uint64_t fa = parse_uint("fast_accum", values[9]);
  FP8GEMM_REQUIRE(fa <= 1, kInvalidArgument, "cublaslt tactic: fast_accum must be 0 or 1");
  c.fast_accum = fa == 1;
  return c;
}

AlgoConfig read_config(const cublasLtMatmulAlgo_t& algo, bool fast_accum) {
  AlgoConfig c;
  get_attr(algo, CUBLASLT_ALGO_CONFIG_ID, c.algo_id);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
  get_attr(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
  c.fast_accum = fast_accum;
  return c;
}

void write_config(cublasLtMatmulAlgo_t& algo, const AlgoConfig& c) {
  set_attr(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.splitk);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner);
  set_attr(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster);
}

}  // namespace fp8gemm::cublaslt
