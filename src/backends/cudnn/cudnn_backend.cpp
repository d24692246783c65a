// The cudnn backend. One operation graph per problem, the same for every tactic:
//   C = matmul(A [b,m,k] row-major, B [b,k,n] column-major) in fp32,
//   out = (C * a_scale) * b_scale, bf16 or fp16, row-major;
// the scales are {1,1,1} fp32 tensors read on the device. A tactic is one execution plan
// (engine + knobs), built for a problem once and kept (plans take milliseconds to build).
#include "backends/cudnn/cudnn_backend.h"

#include <cudnn_frontend.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/plan_name.h"
#include "fp8gemm/check.h"

namespace fp8gemm {
namespace {

namespace fe = cudnn_frontend;

// The graph's tensor uids: run() hands cuDNN the call's pointers under these.
enum Uid : int64_t { kA = 1, kB, kAScale, kBScale, kOut };

fe::DataType_t fe_type(DType t) {
  switch (t) {
    case DType::kE4M3: return fe::DataType_t::FP8_E4M3;
    case DType::kE5M2: return fe::DataType_t::FP8_E5M2;
    case DType::kBF16: return fe::DataType_t::BFLOAT16;
    case DType::kFP16: return fe::DataType_t::HALF;
  }
  return fe::DataType_t::NOT_SET;
}

// Throws Error(kUnsupported) with cuDNN's message when a frontend step fails.
void check(fe::error_t e, const char* step) {
  if (!e.is_good()) FP8GEMM_FAIL(kUnsupported, "cuDNN ", step, ": ", e.get_message());
}

// The problem's operation graph, validated and lowered (no plans yet).
std::shared_ptr<fe::graph::Graph> make_graph(const Problem& p, cudnnHandle_t handle) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t b = p.batch, m = p.m, n = p.n, k = p.k;
  auto a = g->tensor(fe::graph::Tensor_attributes().set_name("A").set_uid(kA).set_dim({b, m, k}).set_stride(
      {m * k, k, 1}).set_data_type(fe_type(p.a_type)));
  auto w = g->tensor(fe::graph::Tensor_attributes().set_name("B").set_uid(kB).set_dim({b, k, n}).set_stride(
      {n * k, 1, k}).set_data_type(fe_type(p.b_type)));
  auto scalar = [&](const char* name, int64_t uid) {
    return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim({1, 1, 1}).set_stride(
        {1, 1, 1}).set_data_type(fe::DataType_t::FLOAT));
  };
  auto sa = scalar("a_scale", kAScale), sb = scalar("b_scale", kBScale);
  auto c = g->matmul(a, w, fe::graph::Matmul_attributes().set_name("matmul").set_compute_data_type(
                               fe::DataType_t::FLOAT));
  c->set_data_type(fe::DataType_t::FLOAT);
  auto mul = [](const char* name) {
    return fe::graph::Pointwise_attributes().set_name(name).set_mode(fe::PointwiseMode_t::MUL).set_compute_data_type(
        fe::DataType_t::FLOAT);
  };
  auto c_a = g->pointwise(c, sa, mul("times_a_scale"));
  c_a->set_data_type(fe::DataType_t::FLOAT);
  auto out = g->pointwise(c_a, sb, mul("times_b_scale"));
  out->set_output(true).set_uid(kOut).set_data_type(fe_type(p.out_type));
  check(g->validate(), "validate");
  check(g->build_operation_graph(handle), "build_operation_graph");
  return g;
}

cudnn::PlanConfig config_at(const fe::graph::Graph& g, int64_t index) {
  int64_t engine = -1;
  std::unordered_map<fe::KnobType_t, int64_t> knobs;
  check(g.get_engine_and_knobs_at_index(index, engine, knobs), "get_engine_and_knobs_at_index");
  cudnn::PlanConfig c;
  c.engine = engine;
  for (const auto& [type, value] : knobs) c.knobs.emplace_back(int64_t(type), value);
  return c;
}

// A plan built for one problem, or why it could not be.
struct BuiltPlan {
  std::shared_ptr<fe::graph::Graph> graph;
  size_t workspace = 0;
  Verdict verdict;
};

class CudnnBackend final : public Backend {
 public:
  CudnnBackend(const DeviceInfo& device, const BackendOptions& options)
      : device_(device), max_workspace_(options.workspace_bytes), list_compiled_(list_compiled(options)) {
    if (device.compute_capability() < 90)
      availability_ = Verdict::no("cuDNN's FP8 matmul needs compute capability 9.0+, GPU has " +
                                  std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor));
    else
      availability_ = cudnn::load_library().verdict;
  }
  ~CudnnBackend() override {
    if (handle_) fe::detail::destroy_handle(handle_);
  }

  std::string name() const override { return "cudnn"; }
  Verdict available() const override { return availability_; }

  // The heuristic's plans (mode A, then the fallback list), in its order, up to kMaxListed that
  // build and fit the workspace. Plans that compile at run time (NVRTC, per plan and problem,
  // once per process, which is slow) only with BackendOptions::cudnn_runtime_compiled, and at
  // most kMaxRuntimeCompiled of them: otherwise every tune and `bench --tactics all` would pay
  // that for every shape, for a backend that is almost never faster than cuBLASLt's default
  // (docs/cudnn.md).
  //
  // Without runtime-compiled plans, one listing per type signature (A, B, out dtypes) that finds
  // only such plans stands for all of that signature's problems: cuDNN chooses the engines of this
  // graph by types and the shape changes only their knobs, while a heuristic query per problem
  // makes a whole-suite tune noticeably longer (docs/decisions/backends.md). The option lists per
  // problem.
  std::vector<Tactic> tactics(const Problem& p) override {
    if (!availability_ || p.empty() || p.bias) return {};
    const int signature = int(p.a_type) * 16 + int(p.b_type) * 4 + int(p.out_type);
    if (!list_compiled_) {
      std::shared_lock lock(mutex_);
      if (only_compiled_.count(signature)) return {};
    }
    const Listing& l = listing(p);
    if (!list_compiled_ && l.tactics.empty() && !l.compiled_left_out.empty()) {
      std::unique_lock lock(mutex_);
      only_compiled_.insert(signature);
    }
    return l.tactics;
  }

  // The first listed plan; else (runtime-compiled plans not listed) the first of those that
  // builds: a caller that names backend "cudnn" gets a plan whatever its cost.
  Tactic default_tactic(const Problem& p) override {
    FP8GEMM_REQUIRE(availability_.ok, kNotAvailable, "cudnn is not available: ", availability_.reason);
    FP8GEMM_REQUIRE(!p.bias, kUnsupported, kNoBias);
    const Listing& l = listing(p);
    if (!l.tactics.empty()) return l.tactics.front();
    std::string why = l.why_none;
    for (const std::string& config : l.compiled_left_out) {
      const Verdict v = built(p, config).verdict;
      if (v.ok) return {name(), config};
      why += "; " + config + ": " + v.reason;
    }
    FP8GEMM_FAIL(kUnsupported, "cuDNN has no engine for ", p, ": ", why);
  }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    if (t.backend != name()) return Verdict::no("not a cudnn tactic: " + t.name());
    if (!availability_) return availability_;
    if (p.bias) return Verdict::no(kNoBias);
    return built(p, t.config).verdict;  // a malformed name is refused there, with the parser's rule
  }

  size_t workspace_bytes(const Problem& p, const Tactic& t) override { return built(p, t.config).workspace; }

  void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace ws, cudaStream_t stream) override {
    if (p.empty()) return;
    const BuiltPlan& plan = built(p, t.config);
    FP8GEMM_REQUIRE(plan.verdict.ok, kUnsupported, "tactic ", t.name(), " cannot run ", p, ": ",
                    plan.verdict.reason);
    std::unordered_map<int64_t, void*> pointers = {{kA, const_cast<void*>(args.a)},
                                                   {kB, const_cast<void*>(args.b)},
                                                   {kAScale, const_cast<float*>(args.a_scale)},
                                                   {kBScale, const_cast<float*>(args.b_scale)},
                                                   {kOut, args.out}};
    // One handle, bound to the call's stream for the call: calls (and plan builds) take turns.
    std::lock_guard lock(handle_mutex_);
    cudnnHandle_t h = handle();
    const cudnnStatus_t st = fe::detail::set_stream(h, stream);
    FP8GEMM_REQUIRE(st == CUDNN_STATUS_SUCCESS, kCuda, "cudnnSetStream failed: ", fe::detail::get_error_string(st));
    fe::error_t e;
    try {
      e = plan.graph->execute(h, pointers, ws.ptr);
    } catch (const std::exception& x) {  // the frontend throws when a symbol cannot be resolved
      FP8GEMM_FAIL(kCuda, "cuDNN execute of ", t.name(), " on ", p, " threw: ", x.what());
    }
    FP8GEMM_REQUIRE(e.is_good(), kCuda, "cuDNN execute of ", t.name(), " on ", p, " failed: ", e.get_message());
  }

 private:
  static constexpr int kMaxListed = 8;
  // The graph is a plain matmul with scales: a bias would be another pointwise node.
  static constexpr const char* kNoBias = "the cudnn graph has no bias node";
  static constexpr int kMaxRuntimeCompiled = 2;

  struct Listing {
    std::vector<Tactic> tactics;
    std::string why_none;  // when `tactics` is empty: what the heuristic answered, and why each plan failed
    std::vector<std::string> compiled_left_out;  // runtime-compiled plans not listed, heuristic order
  };

  const Listing& listing(const Problem& p) {
    {
      std::shared_lock lock(mutex_);
      auto it = listings_.find(p);
      if (it != listings_.end()) return it->second;
    }
    Listing l;
    std::vector<std::pair<std::string, bool>> plans;  // (config, compiles at run time), heuristic order
    try {
      std::lock_guard handle_lock(handle_mutex_);
      auto g = make_graph(p, handle());
      check(g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans");
      for (int64_t i = 0; i < g->get_execution_plan_count(); ++i) {
        std::vector<fe::BehaviorNote_t> notes;
        const bool nvrtc = g->get_behavior_notes_for_plan_at_index(i, notes).is_good() &&
                           std::find(notes.begin(), notes.end(), fe::BehaviorNote_t::RUNTIME_COMPILATION) != notes.end();
        std::string config = cudnn::format_config(config_at(*g, i));
        if (std::none_of(plans.begin(), plans.end(), [&](const auto& q) { return q.first == config; }))
          plans.emplace_back(std::move(config), nvrtc);
      }
      if (plans.empty()) l.why_none = "its heuristics offered no plan";
    } catch (const std::exception& e) {
      l.why_none = e.what();
    }
    int compiled = 0, skipped = 0, failed = 0;
    for (auto& [config, nvrtc] : plans) {
      if (int(l.tactics.size()) == kMaxListed) break;
      if (nvrtc && (!list_compiled_ || compiled == kMaxRuntimeCompiled)) {
        ++skipped;
        l.compiled_left_out.push_back(config);
        continue;
      }
      const Verdict v = built(p, config).verdict;
      if (v.ok) {
        compiled += nvrtc;
        l.tactics.push_back({name(), std::move(config)});
      } else if (++failed <= 2) {
        l.why_none += (l.why_none.empty() ? "" : "; ") + config + ": " + v.reason;
      }
    }
    if (l.tactics.empty() && !plans.empty())
      l.why_none = std::to_string(plans.size()) + " plans offered, " + std::to_string(failed) + " failed to build" +
                   (l.why_none.empty() ? "" : " (" + l.why_none + ")") +
                   (skipped ? ", " + std::to_string(skipped) +
                                  " compile at run time and are not listed (ContextOptions::cudnn_runtime_compiled or "
                                  "FP8GEMM_CUDNN_RUNTIME_COMPILED=1 lists them)"
                            : "");
    std::unique_lock lock(mutex_);
    return listings_.emplace(p, std::move(l)).first->second;
  }

  static bool list_compiled(const BackendOptions& o) {
    const char* env = std::getenv("FP8GEMM_CUDNN_RUNTIME_COMPILED");
    return o.cudnn_runtime_compiled || (env && std::string(env) == "1");
  }

  // Created on first use, not with the Context: cudnnCreate costs time that a process which
  // never uses cuDNN should not pay. Throws Error(kCuda) when it fails. Callers hold handle_mutex_.
  cudnnHandle_t handle() {
    std::call_once(handle_once_, [this] {
      const cudnnStatus_t st = fe::detail::create_handle(&handle_);
      if (st != CUDNN_STATUS_SUCCESS) {
        handle_ = nullptr;
        handle_error_ = std::string("cudnnCreate failed: ") + fe::detail::get_error_string(st);
      }
    });
    FP8GEMM_REQUIRE(handle_, kCuda, handle_error_);
    return handle_;
  }

  // The plan `config` names, built for `p` (memoized, failures too, with their reason).
  const BuiltPlan& built(const Problem& p, const std::string& config) {
    {
      std::shared_lock lock(mutex_);
      auto by_name = plans_.find(config);
      if (by_name != plans_.end()) {
        auto it = by_name->second.find(p);
        if (it != by_name->second.end()) return it->second;
      }
    }
    BuiltPlan b;
    try {
      const cudnn::PlanConfig c = cudnn::parse_config(config);
      std::unordered_map<fe::KnobType_t, int64_t> knobs;
      for (const auto& [type, value] : c.knobs) knobs[fe::KnobType_t(type)] = value;
      std::lock_guard handle_lock(handle_mutex_);  // one handle: plans are built one at a time
      b.graph = make_graph(p, handle());
      check(b.graph->create_execution_plan(c.engine, knobs), "create_execution_plan");
      check(b.graph->check_support(handle()), "check_support");
      check(b.graph->build_plans(handle(), fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
      int64_t bytes = 0;
      check(b.graph->get_workspace_size(bytes), "get_workspace_size");
      b.workspace = size_t(bytes);
      if (b.workspace > max_workspace_)
        b.verdict = Verdict::no("needs " + std::to_string(b.workspace) + " bytes of workspace, more than the context's " +
                                std::to_string(max_workspace_));
    } catch (const std::exception& e) {
      b.verdict = Verdict::no(e.what());
    }
    if (!b.verdict.ok) b.graph.reset();
    std::unique_lock lock(mutex_);
    return plans_[config].emplace(p, std::move(b)).first->second;
  }

  DeviceInfo device_;
  size_t max_workspace_;
  bool list_compiled_;
  Verdict availability_ = Verdict::yes();
  std::once_flag handle_once_;
  cudnnHandle_t handle_ = nullptr;
  std::string handle_error_;
  std::mutex handle_mutex_;  // the handle serves one build or call at a time
  std::shared_mutex mutex_;
  std::map<Problem, Listing> listings_;
  std::set<int> only_compiled_;  // type signatures whose plans all compile at run time (tactics())
  // config -> problem -> plan; std::map: references stay valid on insertion.
  std::map<std::string, std::map<Problem, BuiltPlan>, std::less<>> plans_;
};

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend(const DeviceInfo& device, const BackendOptions& options) {
  return std::make_unique<CudnnBackend>(device, options);
}

}  // namespace fp8gemm
