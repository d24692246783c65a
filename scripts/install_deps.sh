#!/usr/bin/env bash
# Installs what building fp8gemm needs on a fresh Debian/Ubuntu machine that already has the CUDA
# toolkit (nvcc, cuBLASLt): CMake >= 3.26, Ninja, GoogleTest, CLI11, nlohmann/json, and the
# CUTLASS 4.2.0 headers (PyPI package nvidia-cutlass) and the cuDNN frontend 1.32.0 headers (PyPI
# package nvidia-cudnn-frontend). Safe to run again.
set -euo pipefail
need_apt=()
for pkg in libgtest-dev libcli11-dev nlohmann-json3-dev ninja-build python3-pip; do
  dpkg -s "$pkg" > /dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" > /dev/null
fi
PIP="python3 -m pip install -q --disable-pip-version-check"
$PIP --help > /dev/null 2>&1 || PIP="pip3 install -q"
cmake_ok() { command -v cmake > /dev/null && cmake -P /dev/stdin <<< 'if(CMAKE_VERSION VERSION_LESS 3.26)
message(FATAL_ERROR old)
endif()' > /dev/null 2>&1; }
cmake_ok || $PIP "cmake>=3.26,<5" 2>/dev/null || $PIP --break-system-packages "cmake>=3.26,<5"
python3 -c "import cutlass_library" 2> /dev/null || $PIP nvidia-cutlass==4.2.0.0 2>/dev/null || $PIP --break-system-packages nvidia-cutlass==4.2.0.0
# The cuDNN frontend's C++ headers (the cudnn backend; libcudnn itself is loaded at run time).
# --no-deps: its Python dependencies (CUTLASS DSL, TVM FFI) are not needed for the headers.
FE=nvidia-cudnn-frontend==1.32.0
FE_H="$(python3 -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")/include/cudnn_frontend_version.h"
grep -q "CUDNN_FRONTEND_MINOR_VERSION 32" "$FE_H" 2> /dev/null || $PIP --no-deps $FE 2>/dev/null || $PIP --break-system-packages --no-deps $FE
hash -r
echo "deps: $(cmake --version | head -n1), nvcc $(nvcc --version | grep -o 'release [0-9.]*'), CUTLASS via $(python3 -c 'import cutlass_library,os;print(os.path.dirname(cutlass_library.__file__))')"
