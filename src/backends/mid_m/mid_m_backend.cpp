// The Backend face of mid_m: tactic names, limits and launch; the kernels live in the .cu files.
#include "backends/mid_m/mid_m_backend.h"

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "backends/mid_m/mid_m_launch.h"
#include "backends/mid_m/mid_m_select.h"
#include "fp8gemm/check.h"
#include "core/sm90/kernel_image.h"

namespace fp8gemm {
namespace {

class MidMBackend final : public Backend {
 public:
  explicit MidMBackend(const DeviceInfo& device) : limits_(mid_m::DeviceLimits::of(device)) {
    if (limits_.cc != 90) {
      availability_ = Verdict::no("mid_m's wgmma kernels need compute capability 9.0 (sm_90a); device is " +
                                  std::to_string(limits_.cc));
      return;
    }
    const std::string image = sm90::kernel_image_problem();
    if (!image.empty()) availability_ = Verdict::no("no kernel image for this device: " + image);
  }

  std::string name() const override { return "mid_m"; }
  Verdict available() const override { return availability_; }

  std::vector<Tactic> tactics(const Problem& p) override {
    if (!availability_ || !shape_ok(p)) return {};
    std::vector<Tactic> out;
    for (const mid_m::Config& c : mid_m::candidate_configs(p, limits_)) out.push_back({name(), c.to_string()});
    return out;
  }

  Tactic default_tactic(const Problem& p) override {
    FP8GEMM_REQUIRE(availability_.ok, kUnsupported, "mid_m is not available: ", availability_.reason);
    FP8GEMM_REQUIRE(!p.bias, kUnsupported, "mid_m has no bias epilogue");
    return {name(), mid_m::default_config(p, limits_).to_string()};
  }

  Verdict can_implement(const Problem& p, const Tactic& t) override {
    if (!availability_) return availability_;
    if (t.backend != name()) return Verdict::no("tactic " + t.name() + " is not a mid_m tactic");
    try {
      return mid_m::can_implement(p, config_of(t.config), limits_);
    } catch (const Error& e) {
      return Verdict::no(e.what());
    }
  }

  // Split-K is reduced inside a cluster through distributed shared memory: no workspace.
  size_t workspace_bytes(const Problem&, const Tactic&) override { return 0; }

  int64_t same_tiles_up_to(const Problem& p, const Tactic& t) override {
    try {
      return mid_m::same_tiles_up_to(p, config_of(t.config));
    } catch (const Error&) {
      return p.m;
    }
  }

  void run(const Problem& p, const Tactic& t, const GemmArgs& args, Workspace, cudaStream_t stream) override {
    if (p.empty()) return;
    mid_m::launch(mid_m::LaunchArgs{p, config_of(t.config), args, stream, limits_});
  }

 private:
  // Parsed once per name (parsing checks the canonical spelling, which builds a string): the call
  // path then only looks the name up, without copying it.
  mid_m::Config config_of(const std::string& name) {
    {
      std::shared_lock lock(parsed_mutex_);
      auto it = parsed_.find(name);
      if (it != parsed_.end()) return it->second;
    }
    const mid_m::Config c = mid_m::parse_config(name);  // throws on a bad name: not cached
    std::unique_lock lock(parsed_mutex_);
    return parsed_.emplace(name, c).first->second;
  }
  // The shape limits alone (the smallest config): lets tactics() return {} quietly for problems out
  // of range.
  bool shape_ok(const Problem& p) const { return mid_m::can_implement(p, mid_m::ring(64, 1, 3), limits_).ok; }

  mid_m::DeviceLimits limits_;
  Verdict availability_ = Verdict::yes();
  std::shared_mutex parsed_mutex_;
  std::map<std::string, mid_m::Config, std::less<>> parsed_;
};

}  // namespace

std::unique_ptr<Backend> make_mid_m_backend(const DeviceInfo& device, const BackendOptions&) {
  return std::make_unique<MidMBackend>(device);
}

}  // namespace fp8gemm
