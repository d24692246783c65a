#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>
#include <tuple>

#include "fp8gemm/check.h"
#include "fp8gemm/types.h"

namespace fp8gemm {

const char* to_string(DType t) {
  switch (t) {
    case DType::kE4M3: return "e4m3";
    case DType::kE5M2: return "e5m2";
    case DType::kBF16: return "bf16";
    case DType::kFP16: return "fp16";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  std::string low(s);
  std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
  if (low.rfind("torch.", 0) == 0) low = low.substr(6);
  if (low == "e4m3" || low == "e4m3fn" || low == "float8_e4m3fn") return DType::kE4M3;
  if (low == "e5m2" || low == "float8_e5m2") return DType::kE5M2;
  if (low == "bf16" || low == "bfloat16") return DType::kBF16;
  if (low == "fp16" || low == "f16" || low == "float16" || low == "half") return DType::kFP16;
  FP8GEMM_FAIL(kInvalidArgument, "unknown dtype '", s, "': expected e4m3, e5m2, bf16 or fp16");
}

bool is_fp8(DType t) { return t == DType::kE4M3 || t == DType::kE5M2; }
size_t dtype_bytes(DType t) { return is_fp8(t) ? 1 : 2; }
std::ostream& operator<<(std::ostream& os, DType t) { return os << to_string(t); }

double Problem::min_bytes() const {
  // A layer reads its activations as they come (x_type); the FP8 copy is its own intermediate.
  const DType activations = is_layer() ? x_type : a_type;
  return double(batch) * (double(n) * k * dtype_bytes(b_type) + double(m) * k * dtype_bytes(activations) +
                          double(m) * n * dtype_bytes(out_type)) +
         (bias ? double(n) * dtype_bytes(out_type) : 0.0);
}

std::string Problem::to_string() const {
  std::ostringstream os;
  os << "b=" << batch << " m=" << m << " n=" << n << " k=" << k << " " << fp8gemm::to_string(a_type)
     << "x" << fp8gemm::to_string(b_type) << "->" << fp8gemm::to_string(out_type)
     << " align=" << alignment;
  if (scale_alignment != 16) os << " scale_align=" << scale_alignment;
  if (bias) os << " bias";
  if (is_layer())
    os << " x=" << fp8gemm::to_string(x_type) << (prologue == Prologue::kQuantizeStatic ? " static" : " dynamic");
  return os.str();
}

bool Problem::operator==(const Problem& o) const {
  return batch == o.batch && m == o.m && n == o.n && k == o.k && a_type == o.a_type &&
         b_type == o.b_type && out_type == o.out_type && alignment == o.alignment &&
         scale_alignment == o.scale_alignment && bias == o.bias && prologue == o.prologue &&
         (!is_layer() || x_type == o.x_type);
}

bool Problem::operator<(const Problem& o) const {
  auto key = [](const Problem& p) {
    const DType x = p.is_layer() ? p.x_type : DType::kBF16;  // x_type means nothing without a prologue
    return std::make_tuple(p.batch, p.m, p.n, p.k, p.a_type, p.b_type, p.out_type, p.alignment, p.scale_alignment,
                           p.bias, p.prologue, x);
  };
  return key(*this) < key(o);
}

std::ostream& operator<<(std::ostream& os, const Problem& p) { return os << p.to_string(); }

Tactic Tactic::parse(std::string_view name) {
  auto colon = name.find(':');
  FP8GEMM_REQUIRE(colon != std::string_view::npos && colon > 0, kInvalidArgument, "tactic name '",
                  name, "' must look like '<backend>:<config>'");
  return Tactic{std::string(name.substr(0, colon)), std::string(name.substr(colon + 1))};
}

std::ostream& operator<<(std::ostream& os, const Tactic& t) { return os << t.name(); }

}  // namespace fp8gemm
