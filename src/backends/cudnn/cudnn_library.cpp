#include "backends/cudnn/cudnn_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace cudnn_frontend {
// The cuDNN frontend, built with NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, resolves every cuDNN
// call through this handle (cudnn_frontend_shim.h); load_library() sets it.
void* cudnn_dlhandle = nullptr;
}  // namespace cudnn_frontend

namespace fp8gemm::cudnn {

std::string library_name() {
  const char* env = std::getenv("FP8GEMM_CUDNN_LIBRARY");
  return env && *env ? env : "libcudnn.so.9";
}

Library open_library(const std::string& name) {
  Library lib;
  dlerror();
  lib.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char* why = dlerror();
    lib.verdict = Verdict::no("cannot load " + name + " (" + (why ? why : "unknown error") +
                              "): install cuDNN 9 (e.g. pip install nvidia-cudnn-cu13) and put its lib folder on "
                              "LD_LIBRARY_PATH, or set FP8GEMM_CUDNN_LIBRARY to the library's path");
    return lib;
  }
  using GetVersion = size_t (*)();
  auto get_version = reinterpret_cast<GetVersion>(dlsym(lib.handle, "cudnnGetVersion"));
  if (!get_version) {
    dlclose(lib.handle);
    lib.handle = nullptr;
    lib.verdict = Verdict::no(name + " is not cuDNN (it has no cudnnGetVersion)");
    return lib;
  }
  lib.version = long(get_version());
  if (lib.version < 90000) {
    dlclose(lib.handle);
    lib.handle = nullptr;
    lib.verdict = Verdict::no(name + " is cuDNN " + std::to_string(lib.version) +
                              "; FP8 matmul needs cuDNN 9.0 (90000) or newer");
    return lib;
  }
  lib.verdict = Verdict::yes();
  return lib;
}

const Library& load_library() {
  static const Library lib = [] {
    Library l = open_library(library_name());
    if (l.verdict.ok) cudnn_frontend::cudnn_dlhandle = l.handle;  // kept open for the process
    return l;
  }();
  return lib;
}

}  // namespace fp8gemm::cudnn
