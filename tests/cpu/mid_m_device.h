// The device limits the mid_m CPU tests run under: what DeviceInfo reports on an H200 (132 SMs)
// or an H100 PCIe (114), sm_90 with 227 KB of shared memory a block.
#pragma once

#include "backends/mid_m/mid_m_layout.h"

namespace fp8gemm::testing {

inline mid_m::DeviceLimits device(int sms, int cc = 90) {
  DeviceInfo d;
  d.sm_count = sms;
  d.cc_major = cc / 10;
  d.cc_minor = cc % 10;
  d.smem_per_block_optin = 232448;
  return mid_m::DeviceLimits::of(d);
}

}  // namespace fp8gemm::testing
