"""The DESIGN performance suite, mirroring src/measure/shapes.cpp (keep the two in step):
(name, N, K) of real models' linear layers and the M values every benchmark sweeps."""

MODELS = {
    "llama8b": [("llama8b.qkv", 6144, 4096), ("llama8b.o", 4096, 4096), ("llama8b.gate_up", 28672, 4096),
                ("llama8b.down", 4096, 14336)],
    "llama70b": [("llama70b.qkv", 10240, 8192), ("llama70b.o", 8192, 8192), ("llama70b.gate_up", 57344, 8192),
                 ("llama70b.down", 8192, 28672)],
    "llama70b_tp8": [("llama70b_tp8.qkv", 1280, 8192), ("llama70b_tp8.o", 8192, 1024),
                     ("llama70b_tp8.gate_up", 7168, 8192), ("llama70b_tp8.down", 8192, 3584)],
    "nemotronh8b": [("nemoH8b.up", 21504, 4096), ("nemoH8b.down", 4096, 21504), ("nemoH8b.in_proj", 18560, 4096),
                    ("nemoH8b.out_proj", 4096, 8192)],
    "nano9b": [("nano9b.qkv", 7168, 4480), ("nano9b.up", 15680, 4480), ("nano9b.down", 4480, 15680),
               ("nano9b.in_proj", 22656, 4480)],
    "nemotron3super": [("nemotron3super.qkv", 4608, 4096), ("nemotron3super.shared_up", 5376, 4096),
                       ("nemotron3super.shared_down", 4096, 5376)],
}
M_SUITE = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048, 4096, 8192, 16384]


def shapes(models="all"):
    """[(name, N, K)] of a model name, a comma-separated list of them, or "all"."""
    names = list(MODELS) if models == "all" else models.split(",")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown model(s) {unknown}: expected {', '.join(MODELS)} or all")
    return [s for n in names for s in MODELS[n]]


def parse_m(spec):
    """"suite", a list "1,8,64", or a doubling range "1:16384:x2"."""
    if spec == "suite":
        return list(M_SUITE)
    out = []
    for item in spec.split(","):
        if ":x" in item:
            lo, hi, step = item.split(":")
            v = int(lo)
            while v <= int(hi):
                out.append(v)
                v *= int(step[1:])
        else:
            out.append(int(item))
    return out
