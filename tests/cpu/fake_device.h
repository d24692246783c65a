// A fake address space and device for the argument rules' tests (validate with an injected pointer
// inspector), so they run without a GPU.
#pragma once

#include <cstdint>

#include "core/validate.h"

namespace fp8gemm::testing {

// [0x10000000, 0x20000000) is GPU 0, [0x20000000, 0x30000000) GPU 1, [0x30000000, 0x40000000)
// pinned host, anything else unregistered host memory.
inline PointerInfo fake_inspect(const void* ptr) {
  const auto a = reinterpret_cast<uintptr_t>(ptr);
  if (a >= 0x10000000 && a < 0x20000000) return {PointerInfo::Kind::kDevice, 0};
  if (a >= 0x20000000 && a < 0x30000000) return {PointerInfo::Kind::kDevice, 1};
  if (a >= 0x30000000 && a < 0x40000000) return {PointerInfo::Kind::kHost, 0};
  return {PointerInfo::Kind::kUnregistered, -1};
}

inline DeviceInfo fake_h200() {
  DeviceInfo d;
  d.device = 0;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  return d;
}

}  // namespace fp8gemm::testing
