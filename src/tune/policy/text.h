// How the tuner's reasons and notes write numbers (decide.cpp, retime.cpp): a fraction as a
// percentage to 3 significant digits ("4.86%"), a time to 4 ("4.482 us").
#pragma once

#include <sstream>
#include <string>

namespace fp8gemm::tuning {

inline std::string percent(double fraction) {
  std::ostringstream os;
  os.precision(3);
  os << fraction * 100 << "%";
  return os.str();
}

inline std::string us(double x) {
  std::ostringstream os;
  os.precision(4);
  os << x << " us";
  return os.str();
}

}  // namespace fp8gemm::tuning
