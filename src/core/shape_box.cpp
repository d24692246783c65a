#include "core/shape_box.h"

#include <sstream>

namespace fp8gemm {

bool ShapeBox::contains(const Problem& p, int sms) const {
  const int64_t weight = p.n * p.k * p.batch;
  const int64_t rows_per_sm = sms > 0 ? (p.n * p.batch + sms - 1) / sms : 0;
  const bool aligned = p.k % 128 == 0;
  return m_lo <= p.m && p.m <= m_hi && n_lo <= p.n && p.n <= n_hi && k_lo <= p.k && p.k <= k_hi &&
         batch_lo <= p.batch && p.batch <= batch_hi && weight_lo <= weight && weight <= weight_hi &&
         rows_per_sm_lo <= rows_per_sm && rows_per_sm <= rows_per_sm_hi &&
         (k_multiple_of_128 < 0 || aligned == (k_multiple_of_128 == 1));
}

namespace {

// M and batch as "m lo..hi" or "m v"; the others as the rules split them, "n >= lo", "n < end" or
// "lo <= n < end", with bytes in MiB where they divide.
void bound(std::ostream& os, const char*& sep, const char* name, int64_t lo, int64_t hi, int64_t none_lo,
           bool inclusive, bool bytes = false) {
  auto value = [&](int64_t v) {
    std::ostringstream s;
    if (bytes && v % ShapeBox::kMiB == 0) s << v / ShapeBox::kMiB << " MiB";
    else s << v;
    return s.str();
  };
  if (lo <= none_lo && hi == ShapeBox::kAny) return;
  os << sep << name;
  sep = ", ";
  if (inclusive && lo == hi) os << " " << value(lo);
  else if (inclusive && hi != ShapeBox::kAny) os << " " << value(lo) << ".." << value(hi);
  else if (hi == ShapeBox::kAny) os << " >= " << value(lo);
  else if (lo <= none_lo) os << " < " << value(hi + 1);
  else os << " in [" << value(lo) << ", " << value(hi + 1) << ")";
}

}  // namespace

std::string ShapeBox::to_string() const {
  std::ostringstream os;
  const char* sep = "";
  bound(os, sep, "m", m_lo, m_hi, 1, true);
  bound(os, sep, "batch", batch_lo, batch_hi, 1, true);
  if (k_multiple_of_128 >= 0) {
    os << sep << (k_multiple_of_128 ? "k % 128 == 0" : "k % 128 != 0");
    sep = ", ";
  }
  bound(os, sep, "rows per SM", rows_per_sm_lo, rows_per_sm_hi, 1, true);
  bound(os, sep, "n", n_lo, n_hi, 1, false);
  bound(os, sep, "k", k_lo, k_hi, 1, false);
  bound(os, sep, "weight", weight_lo, weight_hi, 0, false, true);
  if (*sep == '\0') os << "any shape";
  return os.str();
}

}  // namespace fp8gemm
