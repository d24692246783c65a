"""The backends fp8gemm knows, from the library's one list of them (src/backends/backends.def,
which the wheel installs beside this file): NAMES in the registry's order, and SPELLINGS, every
accepted spelling (the names and their other spellings) in that order."""
import os
import re
from typing import List, Tuple


def _read() -> List[Tuple[str, List[str]]]:
    here = os.path.dirname(os.path.abspath(__file__))
    places = (os.path.join(here, "backends.def"),  # installed
              os.path.join(here, os.pardir, os.pardir, "src", "backends", "backends.def"))  # a checkout
    for path in places:
        if os.path.isfile(path):
            with open(path) as f:
                rows = re.findall(r'^FP8GEMM_BACKEND\((\w+), "([^"]*)"\)', f.read(), re.M)
            return [(name, others.split()) for name, others in rows]
    raise ImportError("fp8gemm: backends.def is missing beside " + os.path.join(here, "_backends.py") +
                      " (a broken install: reinstall fp8gemm)")


_ROWS = _read()
NAMES = tuple(name for name, _ in _ROWS)
SPELLINGS = tuple(s for name, others in _ROWS for s in [name, *others])
