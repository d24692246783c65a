"""Tests that need no GPU: import, the Meta/fake implementations (shape and dtype inference,
the same argument rules), torch.compile tracing on meta tensors, and error messages."""

import pytest
import torch

import fp8gemm
from helpers import DTYPE_PAIRS, E4M3, E5M2, OUT_DTYPES


def meta_problem(b, m, n, k, a_dtype=E4M3, b_dtype=E4M3, device="meta"):
    A = torch.empty(b, m, k, dtype=a_dtype, device=device)
    W = torch.empty(b, n, k, dtype=b_dtype, device=device)
    s = torch.empty((), dtype=torch.float32, device=device)
    return A, W.transpose(-2, -1), s, s


def test_import_registers_ops():
    for name in ("bmm_fp8", "bmm_fp8_out", "gemm_fp8", "gemm_fp8_out", "tune", "autotune_begin", "info"):
        assert hasattr(torch.ops.fp8gemm, name), name
    schema = str(torch.ops.fp8gemm.bmm_fp8_out.default._schema)
    assert "Tensor(a!) out" in schema, schema
    assert fp8gemm.info()["version"] == fp8gemm.__version__


@pytest.mark.parametrize("a_dtype,b_dtype", DTYPE_PAIRS)
@pytest.mark.parametrize("dtype", OUT_DTYPES)
def test_meta_shape_and_dtype(a_dtype, b_dtype, dtype):
    A, B, sa, sb = meta_problem(3, 17, 256, 128, a_dtype, b_dtype)
    out = fp8gemm.bmm_fp8(A, B, sa, sb, dtype)
    assert out.shape == (3, 17, 256) and out.dtype == dtype and out.device.type == "meta"
    out2 = fp8gemm.gemm_fp8(A[0], B[0], sa, sb, dtype)
    assert out2.shape == (17, 256) and out2.dtype == dtype


def test_meta_out_variant_returns_out():
    A, B, sa, sb = meta_problem(2, 8, 64, 32)
    out = torch.empty(2, 8, 64, dtype=torch.bfloat16, device="meta")
    assert fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, out=out) is out


def test_meta_empty_problem():
    A, B, sa, sb = meta_problem(2, 0, 64, 32)
    assert fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16).shape == (2, 0, 64)


def test_scale_shape_one_element():
    A, B, _, _ = meta_problem(1, 4, 64, 32)
    s1 = torch.empty(1, dtype=torch.float32, device="meta")
    assert fp8gemm.bmm_fp8(A, B, s1, s1, torch.float16).shape == (1, 4, 64)


def test_fake_tensor_mode_cuda_with_symbolic_m():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    with FakeTensorMode(shape_env=ShapeEnv()):
        A, B, sa, sb = meta_problem(2, 64, 256, 128, device="cuda")
        out = fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16)
        assert out.shape == (2, 64, 256) and out.device.type == "cuda"


def test_make_fx_symbolic_keeps_m_dynamic():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(A, B, sa, sb):
        return fp8gemm.gemm_fp8(A, B, sa, sb, torch.bfloat16)

    A, B, sa, sb = meta_problem(1, 48, 256, 128)
    gm = make_fx(f, tracing_mode="symbolic")(A[0], B[0], sa, sb)
    assert "fp8gemm.gemm_fp8" in gm.code
    out = gm(torch.empty(5, 128, dtype=E4M3, device="meta"), B[0], sa, sb)
    assert out.shape == (5, 256)


def test_torch_compile_fullgraph_meta():
    def linear(x, w, sx, sw):
        y = fp8gemm.bmm_fp8(x, w.transpose(-2, -1), sx, sw, torch.bfloat16)
        return y * 2

    compiled = torch.compile(linear, fullgraph=True, backend="aot_eager", dynamic=True)
    for m in (16, 40):
        x = torch.empty(1, m, 128, dtype=E4M3, device="meta")
        w = torch.empty(1, 256, 128, dtype=E4M3, device="meta")
        s = torch.empty((), dtype=torch.float32, device="meta")
        assert compiled(x, w, s, s).shape == (1, m, 256)


def test_torch_compile_fullgraph_out_variant_meta():
    def f(x, w, s, out):
        fp8gemm.bmm_fp8(x, w.transpose(-2, -1), s, s, torch.float16, out=out)
        return out + 1

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    x = torch.empty(1, 8, 64, dtype=E4M3, device="meta")
    w = torch.empty(1, 128, 64, dtype=E4M3, device="meta")
    s = torch.empty((), dtype=torch.float32, device="meta")
    out = torch.empty(1, 8, 128, dtype=torch.float16, device="meta")
    assert compiled(x, w, s, out).shape == (1, 8, 128)


# (description, call on meta tensors, exception type, text the message must contain)
def _errors():
    A, B, sa, sb = meta_problem(2, 16, 64, 32)
    W = B.transpose(-2, -1)
    f32 = torch.empty((), dtype=torch.float32, device="meta")
    return [
        ("weight not transposed", lambda: fp8gemm.bmm_fp8(A, W, sa, sb, torch.bfloat16), ValueError,
         "pass W.transpose(-2, -1)"),
        ("B row-major", lambda: fp8gemm.bmm_fp8(A, B.contiguous(), sa, sb, torch.bfloat16), ValueError,
         "B must be column-major"),
        ("2-D B row-major", lambda: fp8gemm.gemm_fp8(A[0], B[0].contiguous(), sa, sb, torch.bfloat16), ValueError,
         "W.t() of a contiguous [n, k] weight"),
        ("A transposed", lambda: fp8gemm.bmm_fp8(A.transpose(0, 1).contiguous().transpose(0, 1), B, sa, sb,
                                                 torch.bfloat16), ValueError, "A must be contiguous"),
        ("A not fp8", lambda: fp8gemm.bmm_fp8(A.to(torch.bfloat16), B, sa, sb, torch.bfloat16), TypeError,
         "A must be torch.float8_e4m3fn or torch.float8_e5m2, got torch.bfloat16"),
        ("out dtype float32", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.float32), TypeError,
         "must be torch.bfloat16 or torch.float16"),
        ("scale float64", lambda: fp8gemm.bmm_fp8(A, B, f32.double(), sb, torch.bfloat16), TypeError,
         "A_scale must be torch.float32"),
        ("scale with 2 elements", lambda: fp8gemm.bmm_fp8(A, B, sa, torch.empty(2, device="meta"), torch.bfloat16),
         ValueError, "B_scale must have exactly one element"),
        ("e5m2 x e5m2", lambda: fp8gemm.bmm_fp8(A.to(E5M2), B.to(E5M2), sa, sb, torch.bfloat16), ValueError,
         "e5m2 x e5m2 is not supported"),
        ("k not multiple of 16", lambda: fp8gemm.bmm_fp8(*meta_problem(1, 4, 64, 24), torch.bfloat16), ValueError,
         "k must be a multiple of 16"),
        ("n not multiple of 16", lambda: fp8gemm.bmm_fp8(*meta_problem(1, 4, 72, 32), torch.bfloat16), ValueError,
         "n must be a multiple of 16"),
        ("batch mismatch", lambda: fp8gemm.bmm_fp8(A[:1], B, sa, sb, torch.bfloat16), ValueError,
         "same batch size"),
        ("rank", lambda: fp8gemm.bmm_fp8(A[0], B[0], sa, sb, torch.bfloat16), ValueError, "A must be 3-D"),
        ("out dtype mismatch", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16,
                                                       out=torch.empty(2, 16, 64, dtype=torch.half, device="meta")),
         TypeError, "out has dtype torch.float16 but dtype is torch.bfloat16"),
        ("out shape", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16,
                                              out=torch.empty(2, 16, 32, dtype=torch.bfloat16, device="meta")),
         ValueError, "out must have shape [b, m, n] = [2, 16, 64]"),
        ("unknown backend", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, backend="cuda"), ValueError,
         "backend 'cuda' is unknown"),
        ("CPU tensors", lambda: fp8gemm.bmm_fp8(*meta_problem(1, 4, 64, 32, device="cpu"), torch.bfloat16),
         ValueError, "A must be a CUDA tensor"),
    ]


# Tactic names that are not ones: the Meta implementation refuses them as the eager op does.
BAD_BACKENDS = [
    ("nope:x", "backend 'nope:x' is a tactic name of 'nope', which is not a backend"),
    (":", "backend ':' is not a tactic name: expected BACKEND:CONFIG"),
    (":x", "backend ':x' is not a tactic name"),
    ("cublaslt:", "backend 'cublaslt:' is not a tactic name"),
    ("auto:x", "backend 'auto:x' is a tactic name of 'auto', which is not a backend"),
    ("", "backend '' is unknown"),
    ("cublaslt ", "backend 'cublaslt ' is unknown"),
]


def _meta_errors():
    A, B, sa, sb = meta_problem(2, 16, 64, 32)
    cA, cB, csa, csb = meta_problem(2, 16, 64, 32, device="cpu")
    out = torch.empty(2, 16, 64, dtype=torch.bfloat16, device="meta")
    cases = [(f"backend {name!r}", lambda name=name: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, backend=name),
              ValueError, text) for name, text in BAD_BACKENDS]
    return cases + [
        ("gemm backend ':'", lambda: fp8gemm.gemm_fp8(A[0], B[0], sa, sb, torch.bfloat16, backend=":"), ValueError,
         "is not a tactic name"),
        ("out= backend 'nope:x'", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, out=out, backend="nope:x"),
         ValueError, "which is not a backend"),
        ("CPU inputs, meta out", lambda: fp8gemm.bmm_fp8(cA, cB, csa, csb, torch.bfloat16, out=out), ValueError,
         "A is on cpu but out is a meta tensor"),
        ("2-D CPU inputs, meta out", lambda: fp8gemm.gemm_fp8(cA[0], cB[0], csa, csb, torch.bfloat16, out=out[0]),
         ValueError, "A is on cpu but out is a meta tensor"),
        ("CPU scale, meta tensors", lambda: fp8gemm.bmm_fp8(A, B, sa, csb, torch.bfloat16), ValueError,
         "B_scale is on cpu but A is a meta tensor"),
        ("CPU B, meta A and out", lambda: fp8gemm.bmm_fp8(A, cB, sa, sb, torch.bfloat16, out=out), ValueError,
         "B is on cpu but A is a meta tensor"),
        ("k*n beyond 32 bits", lambda: fp8gemm.gemm_fp8(*(t[0] for t in meta_problem(1, 1, 2**27, 32)[:2]), sa, sb,
                                                        torch.bfloat16), ValueError, "n*k (batch stride of B)"),
        ("batch beyond 32 bits", lambda: fp8gemm.bmm_fp8(*meta_problem(2**31, 1, 16, 16), torch.bfloat16), ValueError,
         "batch = 2147483648 exceeds 2^31-1"),
    ]


@pytest.mark.parametrize("case", _errors() + _meta_errors(), ids=lambda c: c[0])
def test_error(case):
    _, call, exc, text = case
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


def test_meta_accepts_an_m_past_32_bit_products():
    # m*n past 2^31-1 (a long prefill through a wide layer) runs as several calls on whole rows.
    A, B, sa, sb = meta_problem(1, 2**20, 2**20, 16)
    assert fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16).shape == (1, 2**20, 2**20)


def test_meta_accepts_the_tactic_names_eager_accepts():
    A, B, sa, sb = meta_problem(1, 8, 64, 32)
    for name in ("cublaslt:algo=66", "cublas:algo=66", "CUTLASS:x", "small_m:anything", "cudnn", "CUBLAS"):
        assert fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, backend=name).shape == (1, 8, 64), name


# The eager op (CPU tensors reach it, the dispatcher having no CPU kernel of its own) checks every
# rule before it allocates `out` or touches a GPU: a 2 TiB output is refused, not allocated, and a
# bad backend or problem is reported ahead of the device.
def _eager_errors():
    A, B, sa, sb = meta_problem(1, 16, 64, 32, device="cpu")
    big_A, big_B, _, _ = meta_problem(1, 2**20, 2**20, 16, device="cpu")  # 16 MiB each; out would be 2 TiB
    out = torch.empty(1, 16, 64, dtype=torch.bfloat16)
    cases = [(f"backend {name!r}", lambda name=name: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, backend=name),
              ValueError, text) for name, text in BAD_BACKENDS]
    return cases + [
        ("out of 2 TiB", lambda: fp8gemm.bmm_fp8(big_A, big_B, sa, sb, torch.bfloat16), ValueError,
         "must be a CUDA tensor"),
        ("2-D out of 2 TiB", lambda: fp8gemm.gemm_fp8(big_A[0], big_B[0], sa, sb, torch.float16), ValueError,
         "must be a CUDA tensor"),
        ("k not multiple of 16", lambda: fp8gemm.bmm_fp8(*meta_problem(1, 4, 64, 24, device="cpu"), torch.bfloat16),
         ValueError, "k must be a multiple of 16"),
        ("e5m2 x e5m2", lambda: fp8gemm.bmm_fp8(A.to(E5M2), B.to(E5M2), sa, sb, torch.bfloat16), ValueError,
         "e5m2 x e5m2 is not supported"),
        ("out= backend ':'", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, out=out, backend=":"), ValueError,
         "is not a tactic name"),
        ("out= shape", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16, out=out[:, :8]), ValueError,
         "out must have shape [b, m, n] = [1, 16, 64]"),
        ("valid call on CPU", lambda: fp8gemm.bmm_fp8(A, B, sa, sb, torch.bfloat16), ValueError,
         "A must be a CUDA tensor, got one on cpu"),
        ("valid out= call on CPU", lambda: fp8gemm.gemm_fp8(A[0], B[0], sa, sb, torch.bfloat16, out=out[0]),
         ValueError, "A must be a CUDA tensor, got one on cpu"),
    ]


@pytest.mark.parametrize("case", _eager_errors(), ids=lambda c: c[0])
def test_eager_error_before_allocation(case):
    _, call, exc, text = case
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


# The tuning ops check their arguments before they look for a GPU.
def _tuning_errors():
    return [
        ("key budget nan", lambda: fp8gemm.tune([(16, 64, 32)], key_budget_ms=float("nan")), ValueError,
         "key_budget_ms must be a finite number in [0, 3600000], got nan"),
        ("key budget -1", lambda: fp8gemm.tune([(16, 64, 32)], key_budget_ms=-1), ValueError, "key_budget_ms"),
        ("key budget inf", lambda: fp8gemm.tune([(16, 64, 32)], key_budget_ms=float("inf")), ValueError,
         "key_budget_ms"),
        ("key budget above an hour", lambda: fp8gemm.tune([(16, 64, 32)], key_budget_ms=1e9), ValueError,
         "key_budget_ms"),
        ("run budget -1", lambda: fp8gemm.tune([(16, 64, 32)], run_budget_ms=-1), ValueError,
         "run_budget_ms must be a finite number >= 0, got -1"),
        ("run budget nan", lambda: fp8gemm.tune([(16, 64, 32)], run_budget_ms=float("nan")), ValueError,
         "run_budget_ms"),
        ("unknown backend", lambda: fp8gemm.tune([(16, 64, 32)], backends=["tensorrt"]), ValueError,
         "backends: 'tensorrt' is not a backend"),
        ("backend auto", lambda: fp8gemm.tune([(16, 64, 32)], backends=["auto"]), ValueError,
         "backends: 'auto' is not a backend"),
        ("bucket edge beyond one call", lambda: fp8gemm.tune([(20000, 65536, 16)]), ValueError,
         "m=20000 is tuned at its M bucket's upper edge m<=32768: m=32768 with n=65536 and k=16: one backend call "
         "takes at most 32704 rows"),
        ("n not multiple of 16", lambda: fp8gemm.tune([(16, 72, 32)]), ValueError, "n must be a multiple of 16"),
        ("negative m", lambda: fp8gemm.tune([(-1, 64, 32)]), ValueError, "m must be >= 0"),
        ("choose bad tactic name", lambda: fp8gemm.choose(16, 64, 32, backend="nope:x"), ValueError,
         "which is not a backend"),
        ("choose k not multiple of 16", lambda: fp8gemm.choose(16, 64, 24), ValueError, "k must be a multiple of 16"),
        ("choose e5m2 x e5m2", lambda: fp8gemm.choose(16, 64, 32, a_dtype=E5M2, b_dtype=E5M2), ValueError,
         "e5m2 x e5m2"),
        ("choose fp32 output", lambda: fp8gemm.choose(16, 64, 32, dtype=torch.float32), TypeError,
         "fp8gemm has no dtype torch.float32"),
        ("explain n=72", lambda: fp8gemm.explain(16, 72, 32), ValueError, "n must be a multiple of 16"),
        ("explain key budget nan", lambda: fp8gemm.explain(16, 64, 32, key_budget_ms=float("nan")), ValueError,
         "key_budget_ms"),
        ("explain bucket edge", lambda: fp8gemm.explain(20000, 65536, 16), ValueError, "m<=32768"),
    ]


@pytest.mark.parametrize("case", _tuning_errors(), ids=lambda c: c[0])
def test_tuning_op_error_before_the_gpu(case):
    _, call, exc, text = case
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value), str(info.value)


def test_tune_shape_errors():
    with pytest.raises(ValueError, match=r"\(m, n, k\) or \(batch, m, n, k\)"):
        fp8gemm._problems([(1, 2)], batch=1)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_info_without_gpu_says_why():
    i = fp8gemm.info()
    assert i["device_count"] == 0 and i["no_device_reason"]


def test_the_library_refuses_another_torch_minor_version(tmp_path):
    """The build records its torch beside the library; another minor version is refused with the
    fix, the same minor version (any patch or local build) passes, no record is not checked."""
    from fp8gemm._library import check_torch_abi

    lib = tmp_path / "libfp8gemm_torch.so"
    lib.write_bytes(b"")
    check_torch_abi(lib)  # no record: a development build
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    (tmp_path / "libfp8gemm_torch.so.torch").write_text(f"{major}.{minor}.99\n")
    check_torch_abi(lib)
    (tmp_path / "libfp8gemm_torch.so.torch").write_text(f"{major}.{int(minor) + 1}.0\n")
    with pytest.raises(ImportError, match=r"was built against torch .* Rebuild it against this torch"):
        check_torch_abi(lib)
