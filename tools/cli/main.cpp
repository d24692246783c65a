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

// Exit status: 0 done; 1 the run failed (a check or a point failed, a file could not be written);
// 2 the command cannot run: a bad argument (CLI11's own parse errors included, which would
// otherwise exit 105-114) or no GPU. Every message goes to stderr.
int main(int argc, char** argv) {
  CLI::App app{"fp8gemm " FP8GEMM_VERSION_STRING ": FP8 GEMM with per-tensor scales (bmm_fp8)"};
  app.require_subcommand(1);
  app.footer("Exit status: 0 done, 1 the run failed, 2 a bad argument or no GPU.");
  for (auto& add : fp8gemm::cli::command_adders()) add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help exits 0
  } catch (const fp8gemm::Error& e) {
    std::cerr << e.what() << "\n";  // "fp8gemm: ..."
    return e.kind() == fp8gemm::ErrorKind::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "fp8gemm: " << e.what() << "\n";
    return 1;
  }
  return fp8gemm::cli::exit_code();
}
