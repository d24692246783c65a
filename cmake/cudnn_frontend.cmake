# Finds the cuDNN frontend headers (header-only C++, pinned to one version) and cudnn.h for the
# cudnn backend. Sets FP8GEMM_CUDNN_FRONTEND_INCLUDE and FP8GEMM_CUDNN_INCLUDE, or
# FP8GEMM_CUDNN_MISSING (why not). libcudnn itself is loaded at run time, never linked.
# Lookup of the frontend:
#   1. CUDNN_FRONTEND_DIR (a cudnn-frontend tree or install: its include/ holds cudnn_frontend.h);
#   2. the PyPI package nvidia-cudnn-frontend==${FP8GEMM_CUDNN_FRONTEND_VERSION}, which installs
#      the headers under <site-packages>/include (`pip install --no-deps`: the headers are all
#      fp8gemm needs; scripts/install_deps.sh does this).
include_guard(GLOBAL)

set(FP8GEMM_CUDNN_FRONTEND_VERSION 1.32.0)
set(CUDNN_FRONTEND_DIR "" CACHE PATH "cudnn-frontend tree to use (empty: the pip package's headers)")

set(FP8GEMM_CUDNN_FRONTEND_INCLUDE "")
set(FP8GEMM_CUDNN_INCLUDE "")
set(FP8GEMM_CUDNN_MISSING "")
if(CUDNN_FRONTEND_DIR)
  set(_fe_candidates "${CUDNN_FRONTEND_DIR}/include" "${CUDNN_FRONTEND_DIR}")
else()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_fe_candidates "")
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"
                    OUTPUT_VARIABLE _purelib OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND _fe_candidates "${_purelib}/include")
  endif()
endif()
foreach(dir IN LISTS _fe_candidates)
  if(EXISTS "${dir}/cudnn_frontend_version.h" AND NOT FP8GEMM_CUDNN_FRONTEND_INCLUDE)
    file(STRINGS "${dir}/cudnn_frontend_version.h" _v REGEX "#define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION ")
    string(REGEX REPLACE ".*MAJOR_VERSION +([0-9]+).*MINOR_VERSION +([0-9]+).*PATCH_VERSION +([0-9]+).*" "\\1.\\2.\\3"
           _fe_version "${_v}")
    if(_fe_version VERSION_EQUAL FP8GEMM_CUDNN_FRONTEND_VERSION)
      set(FP8GEMM_CUDNN_FRONTEND_INCLUDE "${dir}")
    else()
      set(FP8GEMM_CUDNN_MISSING "cudnn_frontend ${_fe_version} found in ${dir}, ${FP8GEMM_CUDNN_FRONTEND_VERSION} is pinned")
    endif()
  endif()
endforeach()
if(NOT FP8GEMM_CUDNN_FRONTEND_INCLUDE AND NOT FP8GEMM_CUDNN_MISSING)
  set(FP8GEMM_CUDNN_MISSING "cudnn_frontend headers not found: pip install --no-deps nvidia-cudnn-frontend==${FP8GEMM_CUDNN_FRONTEND_VERSION} or set CUDNN_FRONTEND_DIR")
endif()

find_path(FP8GEMM_CUDNN_H_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
if(FP8GEMM_CUDNN_H_DIR)
  set(FP8GEMM_CUDNN_INCLUDE "${FP8GEMM_CUDNN_H_DIR}")
elseif(NOT FP8GEMM_CUDNN_MISSING)
  set(FP8GEMM_CUDNN_MISSING "cudnn.h not found (install cuDNN 9's headers next to the CUDA toolkit's)")
endif()
if(FP8GEMM_CUDNN_MISSING)
  set(FP8GEMM_CUDNN_FRONTEND_INCLUDE "")
endif()
