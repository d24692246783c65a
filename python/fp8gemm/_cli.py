"""The `fp8gemm` command of the pip package (a console script): runs the CLI binary installed
inside the package (fp8gemm/bin/fp8gemm) with the CUDA libraries of the installed torch wheels
(nvidia/cu13/lib holds cuBLASLt, nvidia/cudnn/lib cuDNN) on its library path, so that it runs
where torch runs, without a CUDA toolkit. The binary links no torch and no Python."""

import os
import sys
from pathlib import Path

BINARY = Path(__file__).with_name("bin") / "fp8gemm"
# Where torch's CUDA 13 wheels put the libraries the CLI loads (relative to a site-packages dir).
LIBRARY_SUBDIRS = ("nvidia/cu13/lib", "nvidia/cublas/lib", "nvidia/cudnn/lib")


def library_dirs(paths=None):
    """The existing LIBRARY_SUBDIRS under each entry of `paths` (default sys.path), in order."""
    found = []
    for base in sys.path if paths is None else paths:
        for sub in LIBRARY_SUBDIRS:
            d = Path(base or ".") / sub
            if d.is_dir() and str(d) not in found:
                found.append(str(d))
    return found


def main():
    if not BINARY.is_file():
        sys.exit(f"fp8gemm: the command-line tool is not installed at {BINARY}: this package was built without "
                 "it (FP8GEMM_BUILD_CLI=OFF). Rebuild with `pip install .` (docs/torch.md) or build the C++ "
                 "tree's fp8gemm_cli target.")
    env = dict(os.environ)
    dirs = library_dirs() + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else [])
    if dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dirs)
    os.execve(str(BINARY), [str(BINARY)] + sys.argv[1:], env)


if __name__ == "__main__":
    main()
