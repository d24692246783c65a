"""The DESIGN performance suite, the same as the CLI's (tools/common/shapes.cpp; the CPU test
Scripts.SuitePresetsMatchTheCli keeps the two equal): (name, N, K) of real models' linear layers,
the M values every benchmark sweeps, and the CLI's --m grammar."""

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
    """The M values of `spec`, as the CLI's --m reads them (tools/common/shapes.h parse_m_spec),
    sorted ascending without duplicates: comma-separated values ("1,8,64"), "suite", geometric
    ranges "lo:hi:xF" (F >= 2) and arithmetic ranges "lo:hi:+S" (S >= 1), each including lo and
    stopping at or before hi. "buckets" needs the library's bucket edges and is the CLI's alone."""
    forms = "accepted: a value (64), suite, lo:hi:xF (1:16384:x2), lo:hi:+S (16:128:+16)"

    max_m, max_values = 2147483647, 4096  # as the CLI's: a spec that expands further is surely a typo

    def positive(text, what):
        if not text.isdigit() or not 1 <= int(text) <= max_m:
            raise ValueError(f"--m: {what} '{text}' is not an integer in [1, {max_m}]; {forms}")
        return int(text)

    out = set()
    for item in (part.strip() for part in spec.split(",")):
        if item == "suite":
            out.update(M_SUITE)
        elif ":" in item:
            parts = item.split(":")
            if len(parts) != 3:
                raise ValueError(f"--m: range '{item}' needs lo:hi:step; {forms}")
            lo, hi, step = positive(parts[0], "lo"), positive(parts[1], "hi"), parts[2]
            geometric = step[:1] in ("x", "*")
            size = positive(step[1:] if geometric or step[:1] == "+" else step, "step")
            if hi < lo or (geometric and size < 2):
                raise ValueError(f"--m: range '{item}' is empty or has a bad step; {forms}")
            v = lo
            while v <= hi:
                out.add(v)
                if len(out) > max_values:
                    raise ValueError(f"--m: '{item}' gives more than {max_values} values")
                v = v * size if geometric else v + size
        else:
            out.add(positive(item, "value"))
    return sorted(out)
