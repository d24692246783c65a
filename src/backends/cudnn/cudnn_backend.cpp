// The cudnn backend. One operation graph per problem, the same for every tactic:
//   C = matmul(A [b,m,k] row-major, B [b,k,n] column-major) in fp32,
//   out = (C * a_scale) * b_scale, bf16 or fp16, row-major;
// the scales are {1,1,1} fp32 tensors read on the device. A tactic is one execution plan
// (engine + knobs), built for a problem once and kept (plans take milliseconds to build).
#include "backends/cudnn/cudnn_backend.h"

#include <cudnn_frontend.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/plan_name.h"
#include "core/cuda_check.h"

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
  CudnnBackend(const DeviceInfo& device, const ContextOptions& options)
      : device_(device), max_workspace_(options.workspace_bytes) {
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
  // build and fit the workspace. Runtime-compiled engines are left out of the list (compiling
  // one takes up to seconds, on the first call in a process too); they run when named.
  std::vector<Tactic> tactics(const Problem& p) override {
    if (!availability_ || p.empty()) return {};
    {
      std::shared_lock lock(mutex_);
      auto it = tactics_memo_.find(p);
      if (it != tactics_memo_.end()) return it->second;
    }
    std::vector<std::string> listed;  // the heuristic's plans, in its order
    try {
      std::lock_guard handle_lock(handle_mutex_);
      auto g = make_graph(p, handle());
      check(g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "create_execution_plans");
      for (int64_t i = 0; i < g->get_execution_plan_count(); ++i) {
        std::vector<fe::BehaviorNote_t> notes;
        if (g->get_behavior_notes_for_plan_at_index(i, notes).is_good() &&
            std::find(notes.begin(), notes.end(), fe::BehaviorNote_t::RUNTIME_COMPILATION) != notes.end())
          continue;
        std::string config = cudnn::format_config(config_at(*g, i));
        if (std::find(listed.begin(), listed.end(), config) == listed.end()) listed.push_back(std::move(config));
      }
    } catch (const std::exception&) {
      listed.clear();  // no graph or no heuristic for this problem: no tactics (can_implement says why)
    }
    std::vector<Tactic> out;
    for (std::string& config : listed) {
      if (int(out.size()) == kMaxListed) break;
      if (built(p, config).verdict.ok) out.push_back({name(), std::move(config)});
    }
    std::unique_lock lock(mutex_);
    return tactics_memo_.emplace(p, std::move(out)).first->second;
  }

  Tactic default_tactic(const Problem& p) override {
    FP8GEMM_REQUIRE(availability_.ok, kNotAvailable, "cudnn is not available: ", availability_.reason);
    const std::vector<Tactic> all = tactics(p);
    if (all.empty()) {
      // Say why: the reason the graph itself fails, when it does.
      try {
        std::lock_guard handle_lock(handle_mutex_);
        make_graph(p, handle());
      } catch (const std::exception& e) {
        FP8GEMM_FAIL(kUnsupported, "cuDNN cannot run ", p, ": ", e.what());
      }
      FP8GEMM_FAIL(kUnsupported, "cuDNN has no prebuilt engine for ", p);
    }
    return all.front();
  }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    if (t.backend != name()) return Verdict::no("not a cudnn tactic: " + t.name());
    if (!availability_) return availability_;
    try {
      cudnn::parse_config(t.config);
    } catch (const Error& e) {
      return Verdict::no(e.what());
    }
    return built(p, t.config).verdict;
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
  Verdict availability_ = Verdict::yes();
  std::once_flag handle_once_;
  cudnnHandle_t handle_ = nullptr;
  std::string handle_error_;
  std::mutex handle_mutex_;  // the handle serves one build or call at a time
  std::shared_mutex mutex_;
  std::map<Problem, std::vector<Tactic>> tactics_memo_;
  // config -> problem -> plan; std::map: references stay valid on insertion.
  std::map<std::string, std::map<Problem, BuiltPlan>, std::less<>> plans_;
};

}  // namespace

std::unique_ptr<Backend> make_cudnn_backend(const DeviceInfo& device, const ContextOptions& options) {
  return std::make_unique<CudnnBackend>(device, options);
}

}  // namespace fp8gemm
