# Finds the CUTLASS headers (pinned to one version) and defines the INTERFACE target
# fp8gemm::cutlass_headers (the README's "Requirements"). Lookup order:
#   1. CUTLASS_DIR (a CUTLASS source tree: include/ and tools/util/include/);
#   2. the PyPI package nvidia-cutlass==${FP8GEMM_CUTLASS_VERSION} (module cutlass_library,
#      which ships the headers under cutlass_library/source/);
#   3. FetchContent of the tag v${FP8GEMM_CUTLASS_VERSION} (headers only, nothing configured).
include_guard(GLOBAL)

set(FP8GEMM_CUTLASS_VERSION 4.2.0)
set(CUTLASS_DIR "" CACHE PATH "CUTLASS source tree to use (empty: pip package, else FetchContent)")

function(_fp8gemm_cutlass_version root out_var)
  file(STRINGS "${root}/include/cutlass/version.h" lines REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) ")
  set(parts "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ".*CUTLASS_[A-Z]+ +([0-9]+).*" "\\1" number "${line}")
    list(APPEND parts ${number})
  endforeach()
  string(JOIN "." version ${parts})
  set(${out_var} "${version}" PARENT_SCOPE)
endfunction()

set(_cutlass_root "")
set(_cutlass_origin "")
if(CUTLASS_DIR)
  set(_cutlass_root "${CUTLASS_DIR}")
  set(_cutlass_origin "CUTLASS_DIR")
else()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import cutlass_library, os; print(os.path.dirname(cutlass_library.__file__))"
      OUTPUT_VARIABLE _pip_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _pip_rc)
    if(_pip_rc EQUAL 0 AND EXISTS "${_pip_dir}/source/include/cutlass/version.h")
      set(_cutlass_root "${_pip_dir}/source")
      set(_cutlass_origin "pip package nvidia-cutlass")
    endif()
  endif()
  if(NOT _cutlass_root)
    include(FetchContent)
    # SOURCE_SUBDIR points at a folder without CMakeLists.txt: download only, configure nothing.
    FetchContent_Declare(fp8gemm_cutlass
      GIT_REPOSITORY https://github.com/NVIDIA/cutlass.git
      GIT_TAG v${FP8GEMM_CUTLASS_VERSION}
      GIT_SHALLOW TRUE
      SOURCE_SUBDIR fp8gemm-headers-only)
    FetchContent_MakeAvailable(fp8gemm_cutlass)
    set(_cutlass_root "${fp8gemm_cutlass_SOURCE_DIR}")
    set(_cutlass_origin "FetchContent v${FP8GEMM_CUTLASS_VERSION}")
  endif()
endif()

if(NOT EXISTS "${_cutlass_root}/include/cutlass/version.h")
  message(FATAL_ERROR "fp8gemm: no CUTLASS headers at '${_cutlass_root}' (from ${_cutlass_origin}); "
                      "set CUTLASS_DIR or `pip install nvidia-cutlass==${FP8GEMM_CUTLASS_VERSION}.0`, "
                      "or configure with -DFP8GEMM_WITH_CUTLASS=OFF")
endif()
_fp8gemm_cutlass_version("${_cutlass_root}" _found_version)
if(NOT _found_version VERSION_EQUAL FP8GEMM_CUTLASS_VERSION)
  message(FATAL_ERROR "fp8gemm: CUTLASS ${_found_version} found at ${_cutlass_root} (${_cutlass_origin}), "
                      "but the kernels are pinned to ${FP8GEMM_CUTLASS_VERSION}")
endif()
message(STATUS "fp8gemm: CUTLASS ${_found_version} from ${_cutlass_origin}: ${_cutlass_root}")

if(NOT TARGET fp8gemm_cutlass_headers)
  add_library(fp8gemm_cutlass_headers INTERFACE)
  add_library(fp8gemm::cutlass_headers ALIAS fp8gemm_cutlass_headers)
  # SYSTEM: CUTLASS's own warnings are not ours to fix.
  target_include_directories(fp8gemm_cutlass_headers SYSTEM INTERFACE
    "${_cutlass_root}/include" "${_cutlass_root}/tools/util/include")
endif()
