# The library's layers (docs/design.md "Layers"): each folder of src/ builds as its own object
# library whose include path is a folder of links to its own folder and those of the layers it
# uses, nothing else. A wrong-way include (core including tune/..., a backend another backend)
# then fails to compile: "No such file or directory". The objects all go into libfp8gemm.
#
#   fp8gemm_layer(<target> SEES <folders of src/ ...> SOURCES <files ...>)
#
# Sources are relative to the calling folder. The target gets the library's compile options and
# public headers; what else it needs (definitions, generated folders, third-party headers) the
# caller adds to <target>.
function(fp8gemm_layer target)
  cmake_parse_arguments(L "" "" "SEES;SOURCES" ${ARGN})
  set(view ${PROJECT_BINARY_DIR}/layer_views/${target})
  fp8gemm_layer_view(${view} ${L_SEES})
  add_library(${target} OBJECT ${L_SOURCES})
  target_include_directories(${target} PRIVATE ${view} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${target} PRIVATE CUDA::cudart_static CUDA::cublasLt)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)
  target_sources(fp8gemm PRIVATE $<TARGET_OBJECTS:${target}>)
endfunction()

# Makes `view` a folder holding a link to each named folder of src/ (e.g. core, backends/small_m)
# under the same relative path, so that `#include "core/x.h"` resolves through it.
function(fp8gemm_layer_view view)
  file(REMOVE_RECURSE ${view})
  foreach(folder IN LISTS ARGN)
    get_filename_component(parent ${view}/${folder} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${view}/${folder} SYMBOLIC)
  endforeach()
  file(MAKE_DIRECTORY ${view})
endfunction()

# The front ends' include path (the CLI and its shared tools): a folder holding a link to tools/
# alone, so that "tools/common/x.h" resolves and no path into src/ does; with include/ beside it,
# they see the library's public headers only.
function(fp8gemm_tools_view view)
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/tools ${view}/tools SYMBOLIC)
endfunction()
