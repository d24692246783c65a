#include "backends/cutlass/config.h"

#include <charconv>
#include <tuple>

namespace fp8gemm::cutlass_backend {

const char* to_string(Schedule s) {
  switch (s) {
    case Schedule::WarpSpecialized: return "warpspecialized";
    case Schedule::Pingpong: return "pingpong";
    case Schedule::Cooperative: return "cooperative";
  }
  return "?";
}

const char* to_string(TileScheduler s) { return s == TileScheduler::StreamK ? "streamk" : "persistent"; }

std::string KernelConfig::name() const {
  std::string s = "sm90_";
  s += to_string(schedule);
  s += "_" + std::to_string(tile_m) + "x" + std::to_string(tile_n) + "x" + std::to_string(tile_k);
  s += "_c" + std::to_string(cluster_m) + "x" + std::to_string(cluster_n) + "x" + std::to_string(cluster_k);
  if (swap_ab) s += "_swap";
  if (scheduler == TileScheduler::StreamK) s += "_streamk";
  if (!fast_accum) s += "_acc32";
  if (pdl) s += "_pdl";
  return s;
}

namespace {

// Splits "AxBxC" into three positive decimal ints (no signs, no leading zeros, <= 4096).
bool parse_triple(std::string_view s, int (&out)[3]) {
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? s.find('x') : s.size();
    if (end == std::string_view::npos || end == 0) return false;
    const std::string_view digits = s.substr(0, end);
    if (digits[0] == '0') return false;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out[i]);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || out[i] <= 0 || out[i] > 4096) return false;
    s.remove_prefix(i < 2 ? end + 1 : end);
  }
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

}  // namespace

std::optional<KernelConfig> KernelConfig::parse(std::string_view name) {
  const std::vector<std::string_view> parts = split(name, '_');
  if (parts.size() < 4 || parts[0] != "sm90") return std::nullopt;
  KernelConfig c;
  if (parts[1] == "warpspecialized") c.schedule = Schedule::WarpSpecialized;
  else if (parts[1] == "pingpong") c.schedule = Schedule::Pingpong;
  else if (parts[1] == "cooperative") c.schedule = Schedule::Cooperative;
  else return std::nullopt;
  int tile[3], cluster[3];
  if (!parse_triple(parts[2], tile)) return std::nullopt;
  if (parts[3].empty() || parts[3][0] != 'c' || !parse_triple(parts[3].substr(1), cluster)) return std::nullopt;
  c.tile_m = tile[0], c.tile_n = tile[1], c.tile_k = tile[2];
  c.cluster_m = cluster[0], c.cluster_n = cluster[1], c.cluster_k = cluster[2];
  // Optional flags, each at most once and in canonical order, so every config has one name.
  const char* flags[] = {"swap", "streamk", "acc32", "pdl"};
  size_t next_flag = 0;
  for (size_t i = 4; i < parts.size(); ++i) {
    while (next_flag < 4 && parts[i] != flags[next_flag]) ++next_flag;
    if (next_flag == 4) return std::nullopt;
    if (next_flag == 0) c.swap_ab = true;
    if (next_flag == 1) c.scheduler = TileScheduler::StreamK;
    if (next_flag == 2) c.fast_accum = false;
    if (next_flag == 3) c.pdl = true;
    ++next_flag;
  }
  return c;
}

bool KernelConfig::operator==(const KernelConfig& o) const {
  auto key = [](const KernelConfig& c) {
    return std::tie(c.schedule, c.tile_m, c.tile_n, c.tile_k, c.cluster_m, c.cluster_n, c.cluster_k,
                    c.scheduler, c.swap_ab, c.fast_accum, c.pdl);
  };
  return key(*this) == key(o);
}

const std::vector<ConfigRow>& config_table() {
  static const std::vector<ConfigRow> rows = {
#define FP8GEMM_CUTLASS_CONFIG(id, sched, tm, tn, tk, cm, cn, ck, tsched, swap, fast, reduced, mixed) \
  {id, {Schedule::sched, tm, tn, tk, cm, cn, ck, TileScheduler::tsched, swap != 0, fast != 0}, reduced != 0, mixed != 0},
#include "backends/cutlass/configs.def"
#undef FP8GEMM_CUTLASS_CONFIG
  };
  return rows;
}

const ConfigRow* find_row(const KernelConfig& c) {
  for (const ConfigRow& row : config_table())
    if (row.config == c) return &row;
  return nullptr;
}

bool built_full_set() {
#if FP8GEMM_CUTLASS_FULL
  return true;
#else
  return false;
#endif
}

bool row_is_built(const ConfigRow& row) { return built_full_set() || row.reduced; }

}  // namespace fp8gemm::cutlass_backend
