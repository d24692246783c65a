"""The pip package's `fp8gemm` command (fp8gemm._cli): it runs the CLI binary installed in the
package with the torch wheels' CUDA library folders on LD_LIBRARY_PATH, and says what is wrong
when the package was built without the CLI."""

import os
import subprocess
import sys
import textwrap

from fp8gemm import _cli


def test_library_dirs_finds_the_torch_wheel_layout(tmp_path):
    (tmp_path / "site" / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    (tmp_path / "site" / "nvidia" / "cudnn" / "lib").mkdir(parents=True)
    dirs = _cli.library_dirs([str(tmp_path / "nowhere"), str(tmp_path / "site"), str(tmp_path / "site")])
    assert dirs == [str(tmp_path / "site" / "nvidia" / "cu13" / "lib"), str(tmp_path / "site" / "nvidia" / "cudnn" / "lib")]


def run_launcher(tmp_path, binary):
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from fp8gemm import _cli
        _cli.BINARY = Path({str(binary)!r})
        sys.argv = ["fp8gemm", "info", "--x"]
        sys.path.insert(0, {str(tmp_path / "site")!r})
        _cli.main()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), LD_LIBRARY_PATH="/opt/mine")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_main_execs_the_binary_with_the_library_path(tmp_path):
    (tmp_path / "site" / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    binary = tmp_path / "fp8gemm"
    binary.write_text('#!/bin/sh\necho "args=$*"\necho "path=$LD_LIBRARY_PATH"\n')
    binary.chmod(0o755)
    out = run_launcher(tmp_path, binary)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "args=info --x"
    path = lines[1].split("=", 1)[1].split(os.pathsep)
    assert str(tmp_path / "site" / "nvidia" / "cu13" / "lib") in path and path[-1] == "/opt/mine"


def test_main_without_the_binary_says_why(tmp_path):
    out = run_launcher(tmp_path, tmp_path / "missing")
    assert out.returncode == 1
    assert "command-line tool is not installed" in out.stderr and "FP8GEMM_BUILD_CLI=OFF" in out.stderr
