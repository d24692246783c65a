#include "core/tactic_fields.h"

#include <charconv>

#include "fp8gemm/check.h"

namespace fp8gemm {

std::vector<TacticField> split_tactic_fields(std::string_view text, std::string_view backend, std::string_view whole,
                                             std::string_view grammar) {
  std::vector<TacticField> out;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const size_t eq = item.find('=');
    FP8GEMM_REQUIRE(eq != std::string_view::npos && eq > 0, kInvalidArgument, backend, " tactic '", whole, "': '",
                    item, "' is not key=value (expected ", grammar, ")");
    out.push_back({item.substr(0, eq), item.substr(eq + 1)});
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

int tactic_field_int(const TacticField& f, std::string_view backend, std::string_view whole) {
  int v = 0;
  const auto [end, ec] = std::from_chars(f.value.data(), f.value.data() + f.value.size(), v);
  FP8GEMM_REQUIRE(ec == std::errc() && end == f.value.data() + f.value.size() && !f.value.empty(), kInvalidArgument,
                  backend, " tactic '", whole, "': ", f.key, "='", f.value, "' is not an integer");
  return v;
}

}  // namespace fp8gemm
