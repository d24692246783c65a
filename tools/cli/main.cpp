// fp8gemm: info | check | bench | tune | explain (see README.md "Command line").
#include <iostream>

#include "fp8gemm/fp8gemm.h"
#include "tools/cli/command.h"

namespace fp8gemm::cli {

std::vector<CommandAdder>& command_adders() {
  static std::vector<CommandAdder> adders;
  return adders;
}

int& exit_code() {
  static int code = 0;
  return code;
}

}  // namespace fp8gemm::cli

int main(int argc, char** argv) {
  CLI::App app{"fp8gemm " FP8GEMM_VERSION_STRING ": FP8 GEMM with per-tensor scales (bmm_fp8)"};
  app.require_subcommand(1);
  for (auto& add : fp8gemm::cli::command_adders()) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const fp8gemm::Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  return fp8gemm::cli::exit_code();
}
