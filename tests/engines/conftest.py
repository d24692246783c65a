"""pytest setup for the engine tests (scripts/test_engines.sh): the real vLLM and SGLang, no GPU.

Each scenario runs in a fresh Python process (run_scenario): the engines keep process-wide state
(vLLM's platform and kernel list, SGLang's hook registry and the functions it patched) that one
scenario must not leave to the next. The engines find fp8gemm's plugins through the entry points
pyproject.toml declares, published here as a dist-info directory on the path (fp8gemm itself is
this checkout's python/ with the extension at $FP8GEMM_TORCH_LIBRARY).
"""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def write_entry_points(site: Path) -> None:
    """fp8gemm's metadata with pyproject.toml's entry points, as `pip install .` would write it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    info = site / f"fp8gemm-{project['version']}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fp8gemm\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def run_scenario(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    write_entry_points(site)
    path = os.pathsep.join([str(ROOT / "python"), str(HERE), str(site), os.environ.get("PYTHONPATH", "")])

    def run(module: str, name: str, env=None, **kwargs) -> dict:
        """Runs module.name(**kwargs) in a new process with `env` added to the environment; returns
        what it returned (through JSON)."""
        full_env = dict(os.environ, PYTHONPATH=path, **(env or {}))
        call = f"{module}.{name}(**json.loads({json.dumps(json.dumps(kwargs))}))"
        code = f"import json, {module}; print('RESULT ' + json.dumps({call}))"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=300)
        result = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        assert done.returncode == 0 and result, f"{module}.{name} failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
        return json.loads(result[-1][len("RESULT "):])

    return run
