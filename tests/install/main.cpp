// A separate CMake project that finds an installed fp8gemm (find_package) and links it: proves
// the package config and the installed headers work. Without a GPU it checks that a call fails
// with fp8gemm::Error.
#include <fp8gemm/fp8gemm.h>
#include <fp8gemm/tune.h>

#include <cstdio>

// A caller's own selector, against the installed interface (fp8gemm/selector.h).
struct NoOpinion final : fp8gemm::Selector {
  std::optional<fp8gemm::Tactic> select(const fp8gemm::Problem&, const std::string&, cudaStream_t) override {
    return std::nullopt;
  }
};

int main() {
  std::printf("consumer: fp8gemm %s, %d GPU(s)\n", FP8GEMM_VERSION_STRING, fp8gemm::device_count());
  if (NoOpinion().select(fp8gemm::Problem{}, "auto", nullptr)) return 1;
  void (*volatile install)(fp8gemm::Context&) = fp8gemm::install_autotuner;  // links the tuner
  if (!install) return 1;
  fp8gemm::BmmFp8Args args;
  args.m = 1, args.n = 100, args.k = 64;  // n is not a multiple of 16
  try {
    fp8gemm::bmm_fp8(args);
  } catch (const fp8gemm::Error& e) {
    std::printf("consumer: expected error: %s\n", e.what());
    return 0;
  }
  std::printf("consumer: FAIL: invalid call accepted\n");
  return 1;
}
