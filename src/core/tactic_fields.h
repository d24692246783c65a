// The key=value fields of a tactic's config ("rows=64,splitk=2,stages=8"), shared by the backends'
// name parsers. Errors are kInvalidArgument naming the backend, the whole name and the rule.
#pragma once

#include <string_view>
#include <vector>

namespace fp8gemm {

struct TacticField {
  std::string_view key, value;
};

// `text` split at ',' into key=value fields (a field without '=' or with an empty key is an error
// that quotes `grammar`). `backend` and `whole` name the tactic in the message; the fields view
// `text`.
std::vector<TacticField> split_tactic_fields(std::string_view text, std::string_view backend, std::string_view whole,
                                             std::string_view grammar);

// The field's value as a decimal int (no sign, no spaces), else an error.
int tactic_field_int(const TacticField& f, std::string_view backend, std::string_view whole);

}  // namespace fp8gemm
