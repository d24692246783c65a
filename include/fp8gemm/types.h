// Plain, printable descriptions of what is computed (Problem), by which kernel (Tactic),
// and on which memory (GemmArgs). See docs/design.md "Semantics".
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

namespace fp8gemm {

enum class DType : uint8_t { kE4M3, kE5M2, kBF16, kFP16 };

const char* to_string(DType t);          // "e4m3", "e5m2", "bf16", "fp16"
DType parse_dtype(std::string_view s);   // accepts the above and torch spellings; throws Error
bool is_fp8(DType t);
size_t dtype_bytes(DType t);
std::ostream& operator<<(std::ostream& os, DType t);

// out[b, m, n] = a_scale * b_scale * sum_k A[b, m, k] * B[b, k, n]
// A row-major (k contiguous); B column-major, i.e. stored [b, n, k] with k contiguous; out
// row-major (n contiguous). All three packed: batch strides are m*k, n*k and m*n elements.
struct Problem {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DType a_type = DType::kE4M3;
  DType b_type = DType::kE4M3;
  DType out_type = DType::kBF16;
  // Smallest byte alignment of the A, B and out pointers (capped at 16). Part of tuning keys.
  int alignment = 16;
  // Smallest byte alignment of the two scale pointers (4, 8 or 16). cuBLASLt's FP8 matmul
  // returns NOT_SUPPORTED unless both are 16-byte aligned (seen on H200 with cuBLASLt 13.1), so
  // it is part of the problem: backends that need it say so in can_implement.
  int scale_alignment = 16;
  // A bias [n] of out_type added to every row in float32 before the output is rounded (the linear
  // layer's; FlashInfer's bmm_fp8 has none). Only backends with a bias epilogue can run it.
  bool bias = false;
  // The linear layer (fp8gemm/linear.h) quantizes its activations before the GEMM: a problem with a
  // prologue is that whole layer, keyed and timed as one; A is then the quantized activations and
  // x_type what they are quantized from. Backends run the GEMM and ignore both fields.
  enum class Prologue : uint8_t { kNone, kQuantizeStatic, kQuantizeDynamic };
  Prologue prologue = Prologue::kNone;
  DType x_type = DType::kBF16;  // with a prologue: the activations' type (bf16 or fp16)

  bool empty() const { return batch == 0 || m == 0; }
  double flops() const { return 2.0 * batch * m * n * k; }
  // Fewest bytes any implementation must move: each input once, the output once.
  double min_bytes() const;
  bool is_layer() const { return prologue != Prologue::kNone; }
  // "b=1 m=16 n=6144 k=4096 e4m3xe4m3->bf16 align=16[ bias][ x=bf16 static|dynamic]"
  std::string to_string() const;
  bool operator==(const Problem& o) const;
  bool operator<(const Problem& o) const;  // a strict order over every field (map keys)
};
std::ostream& operator<<(std::ostream& os, const Problem& p);

// A tactic is identified by its canonical name "<backend>:<config>". The config string is
// owned by the backend, which parses it back into exactly the same kernel; caches and reports
// store names, never list indices.
struct Tactic {
  std::string backend;
  std::string config;

  std::string name() const { return backend + ":" + config; }
  static Tactic parse(std::string_view name);  // splits at the first ':'; throws Error if none
  bool operator==(const Tactic& o) const { return backend == o.backend && config == o.config; }
  bool operator!=(const Tactic& o) const { return !(*this == o); }
};
std::ostream& operator<<(std::ostream& os, const Tactic& t);

// Device memory of one call. Scales are float32 scalars in device memory, never read on the host.
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  void* out = nullptr;
  const void* bias = nullptr;  // [n] of the output type when Problem::bias, else unused
};

// Device scratch of one call. `ptr` is scratch that any launch may overwrite. `flags` are words
// that the blocks of one launch signal each other through (small_m's stream-K tactics): they are
// zero between launches (zeroed once when allocated; a launch clears every flag it sets) and
// nothing else writes them, so they must not overlap the scratch. Both belong to one stream.
struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
  unsigned* flags = nullptr;
  size_t flag_count = 0;
};

// A yes/no answer with the reason for "no" (can_implement, available).
struct Verdict {
  bool ok = true;
  std::string reason;
  static Verdict yes() { return {true, {}}; }
  static Verdict no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

}  // namespace fp8gemm
