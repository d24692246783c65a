"""Inputs and the float64 reference shared by the tests (tolerances as include/fp8gemm/verify.h)."""

import torch

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
# Every supported input pair (e5m2 x e5m2 is rejected) and output type.
DTYPE_PAIRS = [(E4M3, E4M3), (E4M3, E5M2), (E5M2, E4M3)]
OUT_DTYPES = [torch.bfloat16, torch.float16]


def random_fp8(shape, dtype, device="cuda", seed=0):
    """Values over several binades with random signs (never all zeros)."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    x = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-2, 3, shape, generator=g).float())
    return x.clamp(-200, 200).to(dtype).to(device)


def scale(value, device="cuda"):
    return torch.tensor(value, dtype=torch.float32, device=device)


def problem(b, m, n, k, a_dtype=E4M3, b_dtype=E4M3, seed=0, device="cuda"):
    """A [b, m, k] contiguous, the weight W [b, n, k] and B = W.transpose(-2, -1) (column-major)."""
    A = random_fp8((b, m, k), a_dtype, device, seed)
    W = random_fp8((b, n, k), b_dtype, device, seed + 1)
    return A, W, W.transpose(-2, -1), scale(0.75, device), scale(1.5, device)


def reference(A, B, A_scale, B_scale):
    """float64 out and sum|A*B| (which sets the accumulation tolerance)."""
    a, b = A.double(), B.double()
    s = A_scale.double().item() * B_scale.double().item()
    return s * (a @ b), abs(s) * (a.abs() @ b.abs())


def allowed_error(ref, abs_sum, out_dtype, factor=1.0):
    """The GEMM's tolerance per element (include/fp8gemm/verify.h Tolerance): an output ulp plus
    fast accumulation's error."""
    out_rtol = 2.0**-7 if out_dtype == torch.bfloat16 else 2.0**-10
    return factor * (out_rtol * ref.abs() + 2.0**-9 * abs_sum) + 1e-30


def assert_close_to_reference(out, A, B, A_scale, B_scale, factor=1.0):
    ref, abs_sum = reference(A, B, A_scale, B_scale)
    allowed = allowed_error(ref, abs_sum, out.dtype, factor)
    err = (out.double() - ref).abs()
    ratio = (err / allowed).max().item()
    assert not torch.isnan(out).any(), "NaN in the output"
    assert ratio <= 1.0, f"max |out - ref| / allowed = {ratio:.3g}"
    fro = (err.norm() / ref.norm().clamp_min(1e-30)).item()
    assert fro < 1e-2 * factor, f"relative Frobenius error {fro:.3g}"


def layer_reference(x_fp8, weight, x_scale, w_scale, bias):
    """The linear layer's float64 out from its quantized input, and sum|x*w| (scaled as the out)."""
    ref = (x_fp8.double() @ weight.double().t()) * x_scale.double() * w_scale.double()
    abs_sum = (x_fp8.double().abs() @ weight.double().abs().t()) * x_scale.double() * w_scale.double()
    return ref + (bias.double() if bias is not None else 0), abs_sum


def assert_layer_close(y, ref, abs_sum):
    """y within the GEMM's tolerance (allowed_error) of the float64 reference."""
    err = (y.double() - ref).abs()
    allowed = allowed_error(ref, abs_sum, y.dtype)
    assert not torch.isnan(y).any()
    assert (err / allowed).max().item() <= 1.0, (err / allowed).max().item()
