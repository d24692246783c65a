#!/usr/bin/env python3
"""fp8gemm against torch._scaled_mm and bf16 on whole decode steps: the `step`, `layer`, `isolate`,
`e2e` and `plot` commands of fp8gemm.bench.decode_step (python/fp8gemm/bench/), which the package
ships too (python -m fp8gemm.bench.decode_step). docs/torch.md "Decode-step benchmark" gives the commands.

  python3 bench/decode_step.py step --model llama8b --m 1:4096:x2 --csv step.csv --plot step.png
  python3 bench/decode_step.py isolate --linears qkv=2560x8192,o=8192x2048,gate_up=14336x8192,down=8192x7168 --m 256
  python3 bench/decode_step.py layer --model qwen3_4b,mistral_large_tp8,llama8b --csv layer.csv --plot layer.png
  python3 bench/decode_step.py e2e --preset qwen3_4b --batch 1,8 --json e2e.json
  python3 bench/decode_step.py e2e --dry-run        # any subcommand: checks and a CPU build, no GPU
"""

import os
import sys
from pathlib import Path

if os.environ.get("FP8GEMM_TORCH_LIBRARY"):  # a development build: this checkout's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from fp8gemm.bench.decode_step import main  # noqa: E402

sys.exit(main())
