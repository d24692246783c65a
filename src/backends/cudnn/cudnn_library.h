// libcudnn is loaded at run time (dlopen), not linked: fp8gemm starts and every other backend
// works on a machine without cuDNN, where the cudnn backend reports itself unavailable with the
// reason (docs/design.md: a backend that fails to load never takes the process down).
#pragma once

#include <string>

#include "fp8gemm/types.h"

namespace fp8gemm::cudnn {

// The library the backend uses: FP8GEMM_CUDNN_LIBRARY (a file name or path) if set, else
// libcudnn.so.9 from the loader's search path.
std::string library_name();

struct Library {
  Verdict verdict;          // why it cannot be used, if it cannot
  void* handle = nullptr;   // dlopen handle
  long version = 0;         // cudnnGetVersion(), e.g. 91900
};

// Opens `name` and checks that it is cuDNN 9 or newer (FP8 matmul needs 9.0). Not cached;
// closes what it opened when the check fails.
Library open_library(const std::string& name);

// open_library(library_name()) once per process; on success the cuDNN frontend's calls go to it.
const Library& load_library();

}  // namespace fp8gemm::cudnn
