"""Benchmarks shipped with the package (they need a GPU; each has a CPU --dry-run):

    python -m fp8gemm.bench.decode_step step ...   every linear of a decode step in one CUDA graph
    python -m fp8gemm.bench.decode_step layer ...  FP8 linear layers (bf16 in/out) against bf16, per step
    python -m fp8gemm.bench.decode_step isolate ... what costs between the kernels of a step
    python -m fp8gemm.bench.decode_step e2e ...     greedy decode of a transformers model

bench/decode_step.py in the repository runs the same entry point.
"""
