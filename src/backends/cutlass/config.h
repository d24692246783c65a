// A CUTLASS SM90 kernel configuration (one row of configs.def) and its canonical name,
// e.g. "sm90_pingpong_64x128x128_c2x1x1" or "sm90_cooperative_128x16x256_c1x1x1_swap_streamk".
// Plain C++: no CUTLASS headers, so names and the table are testable on any machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8gemm::cutlass_backend {

enum class Schedule { WarpSpecialized, Pingpong, Cooperative };
enum class TileScheduler { Persistent, StreamK };

const char* to_string(Schedule s);       // "warpspecialized", "pingpong", "cooperative"
const char* to_string(TileScheduler s);  // "persistent", "streamk"

struct KernelConfig {
  Schedule schedule = Schedule::Pingpong;
  int tile_m = 0, tile_n = 0, tile_k = 0;           // in kernel terms (swapped when swap_ab)
  int cluster_m = 1, cluster_n = 1, cluster_k = 1;
  TileScheduler scheduler = TileScheduler::Persistent;
  bool swap_ab = false;     // weights on the MMA's M side, activations on N; out stays [m, n]
  bool fast_accum = true;   // false: FP32 promotion, named "acc32"
  // Launch option, not a kernel: programmatic dependent launch ("pdl"); persistent rows only
  // (the stream-K kernels are built without GDC, kernel.cuh). configs.def rows have pdl = false.
  bool pdl = false;

  // sm90_<schedule>_<MxNxK>_c<MxNxK>[_swap][_streamk][_acc32][_pdl]
  std::string name() const;
  // The config a name denotes, or nullopt when it is not a well-formed name. Whether that
  // kernel was built is a separate question (find_config).
  static std::optional<KernelConfig> parse(std::string_view name);

  // The same kernel launched without PDL (the configs.def row's config).
  KernelConfig kernel() const {
    KernelConfig k = *this;
    k.pdl = false;
    return k;
  }

  bool operator==(const KernelConfig& o) const;
  bool operator!=(const KernelConfig& o) const { return !(*this == o); }
};

// One row of configs.def.
struct ConfigRow {
  int id;
  KernelConfig config;
  bool reduced;    // also built with FP8GEMM_CUTLASS_KERNELS=reduced
  bool mixed_fp8;  // also built for e4m3 x e5m2 and e5m2 x e4m3
};

// Every row of configs.def, in table order (whether built in this library or not).
const std::vector<ConfigRow>& config_table();
// The row whose config is `c`, or nullptr.
const ConfigRow* find_row(const KernelConfig& c);
// Whether this library was built with every row (FP8GEMM_CUTLASS_KERNELS=full).
bool built_full_set();
// Whether `row` is compiled into this library.
bool row_is_built(const ConfigRow& row);

}  // namespace fp8gemm::cutlass_backend
