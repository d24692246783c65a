#!/usr/bin/env python3
"""python/fp8gemm/suite.py holds the CLI's model presets and M suite (tools/common/shapes.cpp) for
Python: the same layers in the same order, the same M values, and its parse_m reads --m specs as
the CLI does (the cases of tests/cpu/test_shapes.cpp).

    python3 tests/scripts/check_suite_presets.py REPO_ROOT
"""
import importlib.util
import os
import re
import sys


def load_suite(root):
    spec = importlib.util.spec_from_file_location("suite", os.path.join(root, "python", "fp8gemm", "suite.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # suite.py alone: the package's __init__ needs torch
    return module


def cli_presets(source):
    """{preset: [(name, N, K)]} and the suite's M values as shapes.cpp writes them."""
    body = source[source.index("presets() {"):source.index("return all;")]
    presets, current = {}, None
    # In order: {"preset", ... opens a preset, {"layer", N, K} is one of its layers.
    for name, n, k in re.findall(r'\{"([^"]+)"(?:, (\d+), (\d+)\})?', body):
        if not n:
            current = presets.setdefault(name, [])
        else:
            current.append((name, int(n), int(k)))
    start = source.index("suite_m_values() {")
    values = source[source.index("m = {", start) + 5:source.index("}", start + 40)]
    return presets, [int(v) for v in values.split(",")]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    suite = load_suite(root)
    with open(os.path.join(root, "tools", "common", "shapes.cpp")) as f:
        presets, m_suite = cli_presets(f.read())
    failures = []
    if not presets:
        failures.append("no presets found in tools/common/shapes.cpp (has its layout changed?)")
    if presets != suite.MODELS:
        failures.append(f"presets differ:\n  CLI    {presets}\n  Python {suite.MODELS}")
    if m_suite != suite.M_SUITE:
        failures.append(f"M suite differs: CLI {m_suite}, Python {suite.M_SUITE}")
    cases = {"1,8,64": [1, 8, 64], "64, 8,1,8": [1, 8, 64], "16:128:+16": [16, 32, 48, 64, 80, 96, 112, 128],
             "10:40:15": [10, 25, 40], "3:100:x3": [3, 9, 27, 81], "5:5:x2": [5], "suite": m_suite}
    for spec, expected in cases.items():
        if suite.parse_m(spec) != expected:
            failures.append(f"parse_m({spec!r}) = {suite.parse_m(spec)}, expected {expected}")
    if len(suite.parse_m("1:4:x2,3,suite")) != 21:
        failures.append("parse_m('1:4:x2,3,suite') does not give the suite and 3")
    for bad in ["", "0", "-4", "abc", "1,,2", "8:1:x2", "1:16:x1", "1:16:+0", "1:16", "1:16:x", "1:16:y2",
                "1:2:3:4", "0:16:x2", "1:100000:+1", "99999999999"]:
        try:
            suite.parse_m(bad)
            failures.append(f"parse_m({bad!r}) gave no error")
        except ValueError as e:
            if "--m" not in str(e):
                failures.append(f"parse_m({bad!r}): the error does not name --m: {e}")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(presets)} presets, {len(m_suite)} M values, {len(cases)} specs: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
