// fp8gemm info: the GPU, its versions, and every backend with its availability.
#include <fstream>
#include <iostream>

#include "fp8gemm/fp8gemm.h"
#include "tools/cli/command.h"

namespace fp8gemm::cli {
namespace {

std::string driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (f && std::getline(f, line)) return line;
  return "";
}

void run_info() {
  std::cout << "fp8gemm " << FP8GEMM_VERSION_STRING << "\n";
  if (device_count() == 0) {
    std::cout << "No GPU: " << no_device_reason() << "\n"
              << "Backends compiled in: ";
    for (const auto& n : known_backend_names()) std::cout << n << " ";
    std::cout << "\n(GPU work needs an NVIDIA GPU with compute capability 8.9 or newer; "
                 "CPU self-check: ctest -L cpu)\n";
    return;
  }
  Context& ctx = default_context();
  const DeviceInfo& d = ctx.device();
  std::cout << d.to_string() << "\n";
  if (auto rel = driver_release(); !rel.empty()) std::cout << "driver: " << rel << "\n";
  std::cout << "workspace per stream: " << (ctx.options().workspace_bytes >> 20) << " MiB\n"
            << "backends:\n";
  for (Backend* b : ctx.backends()) {
    Verdict v = b->available();
    std::cout << "  " << b->name() << ": " << (v.ok ? "available" : "unavailable (" + v.reason + ")") << "\n";
  }
}

const CommandRegistrar kRegister([](CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("info", "GPU, versions and backends");
  cmd->callback(run_info);
});

}  // namespace
}  // namespace fp8gemm::cli
