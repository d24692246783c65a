// The Backend face of small_m: tactic names, limits and launch; the kernels live in the .cu files.
#include "backends/small_m/small_m_backend.h"

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "backends/small_m/small_m_config.h"
#include "backends/small_m/small_m_launch.h"
#include "fp8gemm/check.h"
#include "core/sm90/kernel_image.h"

namespace fp8gemm {
namespace {

class SmallMBackend final : public Backend {
 public:
  explicit SmallMBackend(const DeviceInfo& device) : device_(device) {
    const int cc = device.compute_capability();
    if (cc != 90) {
      availability_ = Verdict::no("small_m's wgmma kernels need compute capability 9.0 (sm_90a); device is " +
                                  std::to_string(cc));
      return;
    }
    const std::string image = sm90::kernel_image_problem();
    if (!image.empty()) availability_ = Verdict::no("no kernel image for this device: " + image);
  }

  std::string name() const override { return "small_m"; }
  Verdict available() const override { return availability_; }

  std::vector<Tactic> tactics(const Problem& p) override {
    if (!availability_ || !shape_ok(p)) return {};
    // The default first (the tests and the tuner's candidate order take the list's head as it).
    const std::string first = small_m::default_config(p, device_.sm_count, cc()).to_string();
    std::vector<Tactic> out{{name(), first}};
    for (const small_m::Config& c : small_m::candidate_configs(p, device_.sm_count, cc()))
      if (std::string config = c.to_string(); config != first) out.push_back({name(), std::move(config)});
    return out;
  }

  Tactic default_tactic(const Problem& p) override {
    FP8GEMM_REQUIRE(availability_.ok, kUnsupported, "small_m is not available: ", availability_.reason);
    return {name(), small_m::default_config(p, device_.sm_count, cc()).to_string()};
  }

  std::string default_rule(const Problem& p) override {
    try {
      return availability_ ? small_m::default_rule(p, device_.sm_count, cc()) : std::string();
    } catch (const std::exception&) {
      return {};
    }
  }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    if (!availability_) return availability_;
    if (t.backend != name()) return Verdict::no("tactic " + t.name() + " is not a small_m tactic");
    try {
      return small_m::can_implement(p, config_of(t.config), cc());
    } catch (const Error& e) {
      return Verdict::no(e.what());
    }
  }

  // Split-K is reduced inside a cluster through distributed shared memory: no workspace.
  size_t workspace_bytes(const Problem&, const Tactic&) override { return 0; }

  void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace, cudaStream_t stream) override {
    if (p.empty()) return;
    const small_m::LaunchArgs l{p, config_of(t.config), args, stream, device_.sm_count};
    if (p.a_type == DType::kE4M3 && p.b_type == DType::kE4M3) return small_m::launch_e4m3_e4m3(l);
    if (p.a_type == DType::kE4M3 && p.b_type == DType::kE5M2) return small_m::launch_e4m3_e5m2(l);
    if (p.a_type == DType::kE5M2 && p.b_type == DType::kE4M3) return small_m::launch_e5m2_e4m3(l);
    FP8GEMM_FAIL(kUnsupported, "small_m: dtype pair ", to_string(p.a_type), " x ", to_string(p.b_type),
                 " is not supported");
  }

 private:
  int cc() const { return device_.compute_capability(); }

  // Parsed once per name (parsing checks the canonical spelling, which builds a string): the
  // call path then only looks the name up, without copying it.
  small_m::Config config_of(const std::string& name) {
    {
      std::shared_lock lock(parsed_mutex_);
      auto it = parsed_.find(name);
      if (it != parsed_.end()) return it->second;
    }
    const small_m::Config c = small_m::parse_config(name);  // throws on a bad name: not cached
    std::unique_lock lock(parsed_mutex_);
    return parsed_.emplace(name, c).first->second;
  }
  // Shape limits alone (the smallest config): lets tactics() return {} quietly for problems out of
  // range.
  bool shape_ok(const Problem& p) const { return small_m::can_implement(p, small_m::tma_ring(64, 1, 2), cc()).ok; }

  DeviceInfo device_;
  Verdict availability_ = Verdict::yes();
  std::shared_mutex parsed_mutex_;
  std::map<std::string, small_m::Config, std::less<>> parsed_;
};

}  // namespace

std::unique_ptr<Backend> make_small_m_backend(const DeviceInfo& device, const BackendOptions&) {
  return std::make_unique<SmallMBackend>(device);
}

}  // namespace fp8gemm
