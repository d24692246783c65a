// cuBLASLt backend. Our row-major out[m,n] = A[m,k] * B[k,n] is computed in cuBLASLt's
// column-major world as D^T[n,m] = B^T * A^T, the "TN" form FP8 requires:
//   Lt A := our B (weights), stored [n,k] k-contiguous = k x n column-major, ld k, op T
//   Lt B := our A (activations), [m,k] k-contiguous  = k x m column-major, ld k, op N
//   Lt D := our out, [m,n] n-contiguous              = n x m column-major, ld n
// so Lt's A scale is our b_scale and Lt's B scale our a_scale. This is torch._scaled_mm's own
// orientation; every descriptor and preference value comes from query.h.
#include "backends/cublaslt/cublaslt_backend.h"

#include <cublasLt.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "backends/cublaslt/algo_name.h"
#include "backends/cublaslt/query.h"
#include "fp8gemm/check.h"

namespace fp8gemm {
namespace {

using cublaslt::AlgoConfig;

#define LT_CHECK(expr)                                                                         \
  do {                                                                                         \
    cublasStatus_t lt_status_ = (expr);                                                        \
    if (lt_status_ != CUBLAS_STATUS_SUCCESS)                                                   \
      FP8GEMM_FAIL(kCuda, #expr, " failed: ", cublasLtGetStatusName(lt_status_));              \
  } while (0)

using cublaslt::cuda_type;

template <typename Set, typename Obj, typename Attr, typename T>
void set_attr(Set set, Obj obj, Attr attr, const T& v) {
  LT_CHECK(set(obj, attr, &v, sizeof(T)));
}

// The descriptors of one call or query, initialized in place from its settings (no heap
// allocation on the call path).
struct Descriptors {
  cublasLtMatmulDescOpaque_t op;
  cublasLtMatrixLayoutOpaque_t a, b, c, d;

  // `bias`: the bias vector when s.bias (queries pass any non-null device pointer).
  Descriptors(const cublaslt::MatmulSettings& s, const float* lt_a_scale, const float* lt_b_scale,
              const void* bias) {
    LT_CHECK(cublasLtMatmulDescInit(&op, s.compute, s.scale_type));
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_TRANSA, s.transa);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_TRANSB, s.transb);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, lt_a_scale);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, lt_b_scale);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, s.fast_accum);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, s.a_scale_mode);
    set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, s.b_scale_mode);
    if (s.bias) {
      set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
      set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
      set_attr(cublasLtMatmulDescSetAttribute, &op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, s.bias_type);
    }
    layout(&a, s.a);
    layout(&b, s.b);
    layout(&c, s.c);
    layout(&d, s.d);
  }

  static void layout(cublasLtMatrixLayoutOpaque_t* l, const cublaslt::LayoutSettings& s) {
    LT_CHECK(cublasLtMatrixLayoutInit(l, s.type, s.rows, s.cols, s.ld));
    if (s.batch_count)
      set_attr(cublasLtMatrixLayoutSetAttribute, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, *s.batch_count);
    if (s.batch_stride)
      set_attr(cublasLtMatrixLayoutSetAttribute, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, *s.batch_stride);
  }
};

struct Preference {
  cublasLtMatmulPreferenceOpaque_t pref;

  explicit Preference(const cublaslt::PreferenceSettings& s) {
    LT_CHECK(cublasLtMatmulPreferenceInit(&pref));
    set_attr(cublasLtMatmulPreferenceSetAttribute, &pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
             s.max_workspace_bytes);
    if (s.min_alignment)
      for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        set_attr(cublasLtMatmulPreferenceSetAttribute, &pref, attr, *s.min_alignment);
  }
};

// The largest pointer alignment `algo` requires of A, B, C or D (its MIN_ALIGNMENT caps).
uint32_t required_alignment(const cublasLtMatmulAlgo_t& algo) {
  uint32_t most = 0;
  for (auto cap : {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
                   CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES}) {
    uint32_t v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&algo, cap, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS)
      most = std::max(most, v);
  }
  return most;
}

// An algorithm rebuilt from a tactic name and checked against a problem.
struct CheckedAlgo {
  cublasLtMatmulAlgo_t algo{};
  AlgoConfig config;
  size_t workspace = 0;
  Verdict verdict;
};

class CublasLtBackend final : public Backend {
 public:
  CublasLtBackend(const DeviceInfo& device, const BackendOptions& options)
      : device_(device),
        max_workspace_(options.workspace_bytes),
        floor_workspace_(cublaslt::floor_workspace_bytes(std::getenv("CUBLASLT_WORKSPACE_SIZE"),
                                                          options.workspace_bytes)) {
    LT_CHECK(cublasLtCreate(&handle_));
    // Queries (heuristics, AlgoCheck) never dereference scale or bias pointers, but must see
    // non-null ones so that they pick kernels with the epilogue the real call uses.
    if (cudaMalloc(reinterpret_cast<void**>(&query_scales_), 2 * sizeof(float)) != cudaSuccess) {
      cudaGetLastError();
      cublasLtDestroy(handle_);
      FP8GEMM_FAIL(kCuda, "cudaMalloc of 8 bytes for cuBLASLt queries failed");
    }
  }
  ~CublasLtBackend() override {
    cudaFree(query_scales_);
    cublasLtDestroy(handle_);
  }

  std::string name() const override { return "cublaslt"; }

  Verdict available() const override {
    if (device_.compute_capability() < 89)
      return Verdict::no("FP8 matmul needs compute capability 8.9+, GPU has " +
                         std::to_string(device_.cc_major) + "." + std::to_string(device_.cc_minor));
    return Verdict::yes();
  }

  std::vector<Tactic> tactics(const Problem& p) override {
    if (!scales_supported(p)) return {};
    {
      std::shared_lock lock(mutex_);
      auto it = tactics_memo_.find(p);
      if (it != tactics_memo_.end()) return it->second;
    }
    std::vector<Tactic> out;
    std::set<std::string> seen;
    auto add_config = [&](const AlgoConfig& c) {
      std::string config = cublaslt::format_config(c);
      if (!seen.insert(config).second) return;
      // Re-check through the name: a tactic is only offered if its name alone rebuilds it.
      const CheckedAlgo& checked = checked_algo(p, config);
      if (checked.verdict.ok) out.push_back(Tactic{"cublaslt", config});
    };
    // The floor first, as it is: the tuner's reference is then always among the candidates.
    try {
      add_config(cublaslt::parse_config(default_tactic(p).config));
    } catch (const Error&) {
    }
    // A tile cut exactly to this M is listed in its fitted form ("128xM/2"): the same kernel
    // here, and across the M bucket it keeps the number of M tiles instead of the height, as
    // the heuristic itself does (its best tile grows with M inside a bucket).
    // The first with the full workspace is listed as it is too.
    auto add = [&](const cublasLtMatmulAlgo_t& algo, bool fast_accum, bool keep_fixed = false) {
      const AlgoConfig c = cublaslt::read_config(algo, fast_accum);
      AlgoConfig fitted;
      const bool fits = cublaslt::fit_to_m(c, p.m, fitted);
      if (!fits || keep_fixed) add_config(c);
      if (fits) add_config(fitted);
    };
    for (bool fast_accum : {true, false}) {
      const int count = fast_accum ? kHeuristicCount : kHeuristicCount / 2;
      const auto results = heuristics(p, fast_accum, count, max_workspace_);
      for (size_t i = 0; i < results.size(); ++i) add(results[i].algo, fast_accum, fast_accum && i == 0);
    }
    // The heuristic ranks by its own model, which depends on the workspace it may use: with the
    // Context's full workspace split-K variants rank first, and some non-split kernels that win
    // fall off its short list (docs/decisions/backends.md). Asking again with a small limit adds
    // those; the name check and the output check treat them like the others.
    for (uint64_t small_ws : kSmallWorkspaces)
      for (const auto& r : heuristics(p, true, kSmallWorkspaceCount, std::min<uint64_t>(small_ws, max_workspace_)))
        add(r.algo, true);
    for (const auto& algo : enumerate(p)) add(algo, true);
    std::unique_lock lock(mutex_);
    tactics_memo_[p] = out;
    return out;
  }

  Tactic default_tactic(const Problem& p) override {
    // The floor: the heuristic's first asked exactly as torch._scaled_mm(use_fast_accum=True)
    // asks it (query.h), so that it is torch's kernel. Memoized: the tuner asks for the floor at
    // every M it times, the adaptive tactic at every new problem.
    if (Verdict v = scales_supported(p); !v.ok) FP8GEMM_FAIL(kUnsupported, v.reason);
    {
      std::shared_lock lock(mutex_);
      auto it = default_memo_.find(p);
      if (it != default_memo_.end()) return it->second;
    }
    // torch assumes 256-byte aligned pointers (it declares none); a call here guarantees only
    // p.alignment, so an answer needing more is replaced by the same query declaring it. Where
    // torch's query has no answer (torch would fail), the listing's full-workspace first serves.
    auto results = heuristics(p, true, cublaslt::kTorchRequestedAlgos, cublaslt::torch_preference(floor_workspace_));
    if (results.empty() || required_alignment(results[0].algo) > uint32_t(p.alignment))
      results = heuristics(p, true, 1, cublaslt::listing_preference(p, floor_workspace_));
    if (results.empty()) results = heuristics(p, true, 1, cublaslt::listing_preference(p, max_workspace_));
    FP8GEMM_REQUIRE(!results.empty(), kUnsupported, "cuBLASLt has no algorithm for ", p);
    Tactic t{"cublaslt", cublaslt::format_config(cublaslt::read_config(results[0].algo, true))};
    std::unique_lock lock(mutex_);
    return default_memo_.emplace(p, std::move(t)).first->second;
  }

  std::optional<Tactic> adaptive_default() const override { return Tactic{"cublaslt", kAdaptiveConfig}; }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    if (t.backend != "cublaslt") return Verdict::no("not a cublaslt tactic: " + t.name());
    if (Verdict v = available(); !v.ok) return v;
    if (Verdict v = scales_supported(p); !v.ok) return v;
    try {
      return checked_algo(p, t.config).verdict;
    } catch (const Error& e) {
      return Verdict::no(e.what());
    }
  }

  int64_t same_tiles_up_to(const Problem& p, const Tactic& t) override {
    try {
      return cublaslt::same_tiles_up_to(cublaslt::parse_config(t.config), p.m);
    } catch (const Error&) {
      return p.m;
    }
  }

  size_t workspace_bytes(const Problem& p, const Tactic& t) override {
    return checked_algo(p, t.config).workspace;
  }

  void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace ws, cudaStream_t stream) override {
    const CheckedAlgo& c = checked_algo(p, t.config);
    FP8GEMM_REQUIRE(c.verdict.ok, kUnsupported, "tactic ", t.name(), " cannot run ", p, ": ", c.verdict.reason);
    Descriptors d(cublaslt::matmul_settings(p, c.config.fast_accum), args.b_scale, args.a_scale, args.bias);
    const float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(handle_, &d.op, &alpha, args.b, &d.a, args.a, &d.b, &beta, args.out, &d.c,
                            args.out, &d.d, &c.algo, ws.ptr, ws.bytes, stream));
  }

 private:
  // "cublaslt:heuristic", the adaptive floor: whatever default_tactic() answers for the problem it
  // runs, torch's query at that M (memoized per problem like any other config; never listed by
  // tactics(), whose entries are fixed).
  static constexpr const char* kAdaptiveConfig = "heuristic";
  static constexpr int kHeuristicCount = 32;
  // Extra heuristic queries with these workspace limits (see tactics()), this many results each.
  static constexpr uint64_t kSmallWorkspaces[] = {0, 4ull << 20};
  static constexpr int kSmallWorkspaceCount = 4;

  static Verdict scales_supported(const Problem& p) {
    if (p.scale_alignment >= 16) return Verdict::yes();
    return Verdict::no("cuBLASLt's FP8 matmul needs 16-byte aligned a_scale and b_scale pointers (it returns "
                       "NOT_SUPPORTED otherwise); these are only " + std::to_string(p.scale_alignment) +
                       "-byte aligned");
  }

  static constexpr size_t kMaxEnumerated = 48;

  // The tactic list's query: the problem's alignment declared, this workspace limit.
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics(const Problem& p, bool fast_accum, int count,
                                                          uint64_t max_ws) {
    return heuristics(p, fast_accum, count, cublaslt::listing_preference(p, max_ws));
  }

  std::vector<cublasLtMatmulHeuristicResult_t> heuristics(const Problem& p, bool fast_accum, int count,
                                                          const cublaslt::PreferenceSettings& preference) {
    Descriptors d(cublaslt::matmul_settings(p, fast_accum), query_scales_, query_scales_ + 1, query_scales_);
    Preference pref(preference);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(count));
    int returned = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, &d.op, &d.a, &d.b, &d.c, &d.d, &pref.pref, count,
                                                       results.data(), &returned);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) return {};
    LT_CHECK(st);
    results.resize(size_t(returned));
    results.erase(std::remove_if(results.begin(), results.end(),
                                 [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; }),
                  results.end());
    return results;
  }

  // Configurations beyond the heuristic's list: every algorithm id for these types, each tile
  // it supports, with default stages if AlgoCheck accepts that, else the first stage count it
  // accepts; automatic cluster shape, no split-K. Only those passing AlgoCheck are kept.
  std::vector<cublasLtMatmulAlgo_t> enumerate(const Problem& p) {
    std::vector<int> ids(64);
    int n_ids = 0;
    if (cublasLtMatmulAlgoGetIds(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda_type(p.b_type), cuda_type(p.a_type),
                                 cuda_type(p.out_type), cuda_type(p.out_type), int(ids.size()), ids.data(),
                                 &n_ids) != CUBLAS_STATUS_SUCCESS)
      return {};
    std::vector<cublasLtMatmulAlgo_t> out;
    Descriptors d(cublaslt::matmul_settings(p, true), query_scales_, query_scales_ + 1, query_scales_);
    for (int i = 0; i < n_ids && out.size() < kMaxEnumerated; ++i) {
      cublasLtMatmulAlgo_t algo;
      if (cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda_type(p.b_type), cuda_type(p.a_type),
                                 cuda_type(p.out_type), cuda_type(p.out_type), ids[size_t(i)], &algo) !=
          CUBLAS_STATUS_SUCCESS)
        continue;
      size_t bytes = 0;
      if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, nullptr, 0, &bytes) !=
          CUBLAS_STATUS_SUCCESS)
        continue;
      std::vector<uint32_t> tiles(bytes / sizeof(uint32_t));
      if (tiles.empty()) tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
      else cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_TILE_IDS, tiles.data(), bytes, &bytes);
      std::vector<uint32_t> stages{CUBLASLT_MATMUL_STAGES_UNDEFINED};
      if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, nullptr, 0, &bytes) ==
              CUBLAS_STATUS_SUCCESS &&
          bytes) {
        stages.resize(1 + bytes / sizeof(uint32_t));
        cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_STAGES_IDS, stages.data() + 1, bytes, &bytes);
      }
      for (uint32_t tile : tiles) {
        if (out.size() >= kMaxEnumerated) break;
        for (uint32_t stage : stages) {
          cublasLtMatmulAlgo_t candidate = algo;
          if (cublasLtMatmulAlgoConfigSetAttribute(&candidate, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile) !=
                  CUBLAS_STATUS_SUCCESS ||
              cublasLtMatmulAlgoConfigSetAttribute(&candidate, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage,
                                                   sizeof stage) != CUBLAS_STATUS_SUCCESS)
            continue;
          cublasLtMatmulHeuristicResult_t result{};
          if (cublasLtMatmulAlgoCheck(handle_, &d.op, &d.a, &d.b, &d.c, &d.d, &candidate, &result) ==
                  CUBLAS_STATUS_SUCCESS &&
              result.workspaceSize <= max_workspace_) {
            out.push_back(candidate);
            break;  // one stage count per tile: the first AlgoCheck accepts
          }
        }
      }
    }
    return out;
  }

  // Builds the algorithm of a fixed config and asks cuBLASLt whether it can run `p`.
  CheckedAlgo check(const Problem& p, const AlgoConfig& config) {
    CheckedAlgo c;
    c.config = config;
    if (cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda_type(p.b_type), cuda_type(p.a_type),
                               cuda_type(p.out_type), cuda_type(p.out_type), c.config.algo_id,
                               &c.algo) != CUBLAS_STATUS_SUCCESS) {
      c.verdict = Verdict::no("cuBLASLt has no algorithm " + std::to_string(c.config.algo_id) + " for these types");
      return c;
    }
    try {
      cublaslt::write_config(c.algo, c.config);
      Descriptors d(cublaslt::matmul_settings(p, c.config.fast_accum), query_scales_, query_scales_ + 1, query_scales_);
      cublasLtMatmulHeuristicResult_t result{};
      cublasStatus_t st = cublasLtMatmulAlgoCheck(handle_, &d.op, &d.a, &d.b, &d.c, &d.d, &c.algo, &result);
      if (st != CUBLAS_STATUS_SUCCESS) {
        c.verdict = Verdict::no(std::string("cublasLtMatmulAlgoCheck: ") + cublasLtGetStatusName(st));
      } else if (result.workspaceSize > max_workspace_) {
        c.verdict = Verdict::no("needs " + std::to_string(result.workspaceSize) +
                                " bytes of workspace, more than the context's " + std::to_string(max_workspace_));
      } else {
        c.workspace = result.workspaceSize;
      }
    } catch (const Error& e) {
      c.verdict = Verdict::no(e.what());
    }
    return c;
  }

  // Rebuilds the algorithm from its name alone and checks it against `p`; memoized.
  const CheckedAlgo& checked_algo(const Problem& p, const std::string& config) {
    {
      // Looked up by reference (transparent comparator): the call path copies no string.
      std::shared_lock lock(mutex_);
      auto by_name = algo_memo_.find(config);
      if (by_name != algo_memo_.end()) {
        auto it = by_name->second.find(p);
        if (it != by_name->second.end()) return it->second;
      }
    }
    CheckedAlgo c;
    if (config == kAdaptiveConfig) {  // the default's own config at this problem
      if (Verdict v = scales_supported(p); !v.ok) {
        c.verdict = v;
      } else {
        try {
          c = checked_algo(p, default_tactic(p).config);
        } catch (const Error& e) {
          c.verdict = Verdict::no(e.what());
        }
      }
      std::unique_lock lock(mutex_);
      return algo_memo_[config].emplace(p, c).first->second;
    }
    const AlgoConfig named = cublaslt::parse_config(config);  // throws on a malformed name
    // A fitted tile resolves to the height fitted to p.m; where cuBLASLt lacks that tile or
    // rejects it, the next heights up (+8, +16, +24) are tried, in that order.
    for (uint32_t extra = 0; extra <= (named.fitted() ? 24u : 0u); extra += 8) {
      AlgoConfig fixed;
      if (!cublaslt::resolve_at_m(named, p.m, extra, fixed)) {
        c.verdict = Verdict::no("cuBLASLt has no " + std::to_string(named.fit_rows) + "x" +
                                std::to_string(cublaslt::fitted_height(p.m, named.fit_parts) + extra) + " tile");
        continue;
      }
      c = check(p, fixed);
      if (c.verdict.ok) break;
    }
    std::unique_lock lock(mutex_);
    return algo_memo_[config].emplace(p, c).first->second;
  }

  DeviceInfo device_;
  size_t max_workspace_;
  // The floor's workspace limit: torch's (CUBLASLT_WORKSPACE_SIZE, else 1 MiB), within ours.
  uint64_t floor_workspace_;
  cublasLtHandle_t handle_ = nullptr;
  float* query_scales_ = nullptr;
  std::shared_mutex mutex_;
  std::map<Problem, std::vector<Tactic>> tactics_memo_;
  std::map<Problem, Tactic> default_memo_;
  // config name -> problem -> checked algorithm; std::map: references stay valid on insertion.
  std::map<std::string, std::map<Problem, CheckedAlgo>, std::less<>> algo_memo_;
};

}  // namespace

std::unique_ptr<Backend> make_cublaslt_backend(const DeviceInfo& device, const BackendOptions& options) {
  return std::make_unique<CublasLtBackend>(device, options);
}

}  // namespace fp8gemm
