#include "backends/cutlass/cutlass_backend.h"

#include <climits>
#include <optional>
#include <unordered_map>

#include "backends/cutlass/config.h"
#include "backends/cutlass/kernels.h"
#include "fp8gemm/check.h"
#include "core/decision_tables.h"

namespace fp8gemm {
namespace cutlass_backend {
namespace {

constexpr int kMaxPortableClusterSize = 8;  // larger clusters need an opt-in and may not launch
constexpr int64_t kMaxGridDim = 65535;      // grid.y / grid.z of the non-persistent kernel
constexpr int64_t kMaxTmaStrideBytes = int64_t(1) << 40;

class CutlassBackend final : public Backend {
 public:
  CutlassBackend(const DeviceInfo& device, const BackendOptions&) : device_(device) {
    for (const ConfigRow& row : config_table())
      if (row_is_built(row))
        for (bool pdl : {false, true}) {  // the same row; can_implement refuses _pdl for stream-K
          KernelConfig launched = row.config;
          launched.pdl = pdl;
          built_.emplace(launched.name(), BuiltTactic{&row, pdl});
        }
  }

  std::string name() const override { return "cutlass"; }

  Verdict available() const override {
    if (device_.cc_major != 9 || device_.cc_minor != 0)
      return Verdict::no(detail::cat("the CUTLASS kernels are built for sm_90a and need compute capability 9.0; ",
                                     device_.name, " is ", device_.cc_major, ".", device_.cc_minor));
    if (built_kernels().empty()) return Verdict::no("no CUTLASS kernel was compiled into this library");
    return Verdict::yes();
  }

  // In preference order for p.m (the tuner's short round takes each backend's first tactics
  // when a key's time budget is tight): the default (a rule's or the M buckets'), then the
  // kernels of its orientation (swapped A/B for m <= 64, unswapped above), then the rest, in
  // configs.def order; each persistent kernel also launched with PDL ("_pdl"), right after it.
  // PDL is a choice, not a default: it shortens short calls at small M but slows some long-K
  // ones (docs/decisions/backends.md).
  std::vector<Tactic> tactics(const Problem& p) override {
    std::vector<Tactic> out;
    std::optional<Tactic> first;
    try {
      first = default_tactic(p);
    } catch (const Error&) {
      // nothing fits: the loop below finds nothing either
    }
    if (first) out.push_back(*first);
    const bool want_swap = p.m <= 64;
    for (bool preferred : {true, false})
      for (const ConfigRow& row : config_table()) {
        if (!row_is_built(row) || (row.config.swap_ab == want_swap) != preferred) continue;
        for (bool pdl : {false, true}) {
          KernelConfig c = row.config;
          c.pdl = pdl;
          Tactic t{"cutlass", c.name()};
          if ((!first || t.config != first->config) && can_implement(p, t)) out.push_back(std::move(t));
        }
      }
    return out;
  }

  // The generated default rules (core/decision_tables.h: cutlass): the first rule that covers p and
  // whose config runs it; else the M buckets' choice (bucket_default).
  Tactic default_tactic(const Problem& p) override {
    if (const BoxRule* r = rule_for(p)) return Tactic{"cutlass", r->action};
    return bucket_default(p);
  }

  std::string default_rule(const Problem& p) override {
    const BoxRule* r = rule_for(p);
    if (!r) return {};
    return "CUTLASS rule " + std::to_string(r - default_rules().data()) + " (" + r->box.to_string() + ") -> " +
           r->action + " (" + r->evidence + ")";
  }

  // vLLM's M bucket edges (16, 64, 128) and 2048, each bucket on this table's tiles for it with
  // fallbacks for reduced builds and mixed FP8 types; where no generated rule covers p. The tuner
  // measures the real choice.
  Tactic bucket_default(const Problem& p) {
    static const char* const kSmallM[] = {"sm90_pingpong_64x16x256_c4x1x1_swap", "sm90_pingpong_64x128x128_c2x1x1"};
    static const char* const kUpTo64[] = {"sm90_pingpong_64x64x256_c1x1x1_swap", "sm90_pingpong_64x16x256_c4x1x1_swap",
                                          "sm90_pingpong_64x128x128_c2x1x1"};
    static const char* const kUpTo128[] = {"sm90_pingpong_64x128x128_c2x1x1", "sm90_pingpong_128x128x128_c2x1x1",
                                           "sm90_cooperative_128x256x128_c2x1x1"};
    static const char* const kUpTo2048[] = {"sm90_pingpong_128x128x128_c2x1x1", "sm90_pingpong_64x128x128_c2x1x1",
                                            "sm90_cooperative_128x256x128_c2x1x1"};
    static const char* const kLarge[] = {"sm90_cooperative_128x256x128_c2x1x1", "sm90_pingpong_128x128x128_c2x1x1",
                                         "sm90_pingpong_64x128x128_c2x1x1"};
    auto try_list = [&](auto& names) -> std::optional<Tactic> {
      for (const char* n : names) {
        Tactic t{"cutlass", n};
        if (can_implement(p, t)) return t;
      }
      return std::nullopt;
    };
    std::optional<Tactic> t = p.m <= 16    ? try_list(kSmallM)
                              : p.m <= 64  ? try_list(kUpTo64)
                              : p.m <= 128 ? try_list(kUpTo128)
                              : p.m <= 2048 ? try_list(kUpTo2048)
                                            : try_list(kLarge);
    if (t) return *t;
    for (const ConfigRow& row : config_table()) {  // not tactics(p): that starts from this function
      Tactic any{"cutlass", row.config.name()};
      if (row_is_built(row) && can_implement(p, any)) return any;
    }
    // Nothing fits: say why, from the first built config (the reasons are mostly the same).
    std::string why = "no CUTLASS kernel can run " + p.to_string();
    for (const ConfigRow& row : config_table()) {
      if (!row_is_built(row)) continue;
      why += ": " + can_implement(p, Tactic{"cutlass", row.config.name()}).reason;
      break;
    }
    FP8GEMM_FAIL(kUnsupported, why);
  }

  int64_t same_tiles_up_to(const Problem& p, const Tactic& t) override {
    const std::optional<KernelConfig> c = KernelConfig::parse(t.config);
    if (!c) return p.m;
    const int64_t height = c->swap_ab ? c->tile_n : c->tile_m;  // our M is the kernel's N when swapped
    return height > 0 ? (p.m + height - 1) / height * height : p.m;
  }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    BuiltTactic built;
    if (Verdict v = find_built(t, &built); !v) return v;
    const ConfigRow* row = built.row;
    const KernelConfig& c = row->config;
    if (Verdict v = available(); !v) return v;
    if (!is_fp8(p.a_type) || !is_fp8(p.b_type))
      return Verdict::no(detail::cat("A and B must be FP8 (e4m3/e5m2); got ", p.a_type, " x ", p.b_type));
    if (p.a_type == DType::kE5M2 && p.b_type == DType::kE5M2)
      return Verdict::no("e5m2 x e5m2 is not supported (FlashInfer bmm_fp8 rejects it too)");
    if (p.out_type != DType::kBF16 && p.out_type != DType::kFP16)
      return Verdict::no(detail::cat("out must be bf16 or fp16; got ", p.out_type));
    if (p.bias) return Verdict::no("the CUTLASS kernels are built without a bias epilogue");
    const KernelVariant* v = find_variant(row->id, p);
    if (v && built.pdl && !v->pdl_capable)
      return Verdict::no(detail::cat(t.config, ": stream-K kernels are built without GDC (CUTLASS 4.2's stream-K GDC "
                                     "path does not compile), so they cannot launch with PDL"));
    if (!v)
      return Verdict::no(detail::cat(c.name(), " is compiled for e4m3 x e4m3 only",
                                     row->mixed_fp8 ? "" : " (configs.def mixed_fp8=0)", "; not for ", p.a_type,
                                     " x ", p.b_type));
    if (p.empty()) return Verdict::yes();  // nothing to launch
    if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX || p.batch > INT_MAX)
      return Verdict::no("CUTLASS problem extents are 32-bit ints: m, n, k and batch must be < 2^31");
    if (p.alignment < 16)
      return Verdict::no(detail::cat("TMA needs 16-byte aligned A, B and out pointers; smallest alignment is ",
                                     p.alignment, " bytes"));
    if (p.k % 16 != 0) return Verdict::no(detail::cat("k = ", p.k, " must be a multiple of 16 (16-byte FP8 rows for TMA)"));
    if (p.n % 8 != 0) return Verdict::no(detail::cat("n = ", p.n, " must be a multiple of 8 (16-byte output rows for TMA)"));
    const int64_t out_bytes = int64_t(dtype_bytes(p.out_type));
    if (p.m * p.k >= kMaxTmaStrideBytes || p.n * p.k >= kMaxTmaStrideBytes || p.m * p.n * out_bytes >= kMaxTmaStrideBytes)
      return Verdict::no("one batch of A, B or out spans >= 2^40 bytes, beyond a TMA stride");
    if (c.schedule == Schedule::WarpSpecialized) {
      const int64_t kernel_n = c.swap_ab ? p.m : p.n;
      if ((kernel_n + c.tile_n - 1) / c.tile_n > kMaxGridDim || p.batch > kMaxGridDim)
        return Verdict::no("the non-persistent kernel's grid (tiles along N, batch) exceeds 65535");
    }
    if (c.cluster_m * c.cluster_n * c.cluster_k > kMaxPortableClusterSize)
      return Verdict::no(detail::cat("cluster of ", c.cluster_m * c.cluster_n * c.cluster_k,
                                     " CTAs exceeds the portable limit of ", kMaxPortableClusterSize));
    if (v->smem_bytes > device_.smem_per_block_optin)
      return Verdict::no(detail::cat(c.name(), " needs ", v->smem_bytes, " bytes of shared memory per block; ",
                                     device_.name, " allows ", device_.smem_per_block_optin));
    return v->can_implement(p, device_.sm_count);
  }

  size_t workspace_bytes(const Problem& p, const Tactic& t) override {
    if (p.empty()) return 0;
    return variant_for(p, t).workspace_bytes(p, device_.sm_count);
  }

  void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace ws, cudaStream_t stream) override {
    if (p.empty()) return;
    bool pdl = false;
    const KernelVariant& v = variant_for(p, t, &pdl);
    const size_t need = v.workspace_bytes(p, device_.sm_count);
    FP8GEMM_REQUIRE(ws.bytes >= need && (need == 0 || ws.ptr), kInvalidArgument, "cutlass:", t.config, " needs ",
                    need, " bytes of workspace; got ", ws.bytes);
    v.run(p, args, ws, stream, device_.device, device_.sm_count, pdl);
  }

 private:
  // The generated rules (core/decision_tables.h: cutlass), whose action is a config: sm_90's.
  static const std::vector<BoxRule>& default_rules() { return decision_tables(90).cutlass; }

  const BoxRule* rule_for(const Problem& p) {
    for (const BoxRule& r : default_rules())
      if (r.box.contains(p, device_.sm_count) && can_implement(p, Tactic{"cutlass", r.action})) return &r;
    return nullptr;
  }

  // A built kernel's name, with or without _pdl: its configs.def row and whether it launches with PDL.
  struct BuiltTactic {
    const ConfigRow* row = nullptr;
    bool pdl = false;
  };

  Verdict find_built(const Tactic& t, BuiltTactic* built) const {
    if (t.backend != "cutlass") return Verdict::no("tactic " + t.name() + " does not belong to the cutlass backend");
    const auto it = built_.find(t.config);  // no allocation: run() goes through here
    if (it != built_.end()) {
      *built = it->second;
      return Verdict::yes();
    }
    const std::optional<KernelConfig> c = KernelConfig::parse(t.config);
    if (!c)
      return Verdict::no("'" + t.config + "' is not a CUTLASS tactic name (sm90_<warpspecialized|pingpong|cooperative>_"
                         "<MxNxK>_c<MxNxK>[_swap][_streamk][_acc32][_pdl])");
    if (c->name() != t.config) return Verdict::no("'" + t.config + "' is not canonical; the name is " + c->name());
    if (find_row(c->kernel())) return Verdict::no(t.config + " is not built in this library (FP8GEMM_CUTLASS_KERNELS=reduced)");
    return Verdict::no(t.config + " is not a kernel of configs.def");
  }

  const KernelVariant* find_variant(int row_id, const Problem& p) const {
    for (const KernelVariant& v : built_kernels())
      if (v.row_id == row_id && v.a_type == p.a_type && v.b_type == p.b_type && v.out_type == p.out_type) return &v;
    return nullptr;
  }

  const KernelVariant& variant_for(const Problem& p, const Tactic& t, bool* pdl = nullptr) const {
    BuiltTactic built;
    if (Verdict ok = find_built(t, &built); !ok) FP8GEMM_FAIL(kUnsupported, ok.reason);
    if (pdl) *pdl = built.pdl;
    const KernelVariant* v = find_variant(built.row->id, p);
    FP8GEMM_REQUIRE(v, kUnsupported, t.name(), " has no kernel for ", p.to_string());
    return *v;
  }

  DeviceInfo device_;
  std::unordered_map<std::string, BuiltTactic> built_;  // canonical name -> row, launch option
};

}  // namespace
}  // namespace cutlass_backend

std::unique_ptr<Backend> make_cutlass_backend(const DeviceInfo& device, const BackendOptions& options) {
  return std::make_unique<cutlass_backend::CutlassBackend>(device, options);
}

}  // namespace fp8gemm
