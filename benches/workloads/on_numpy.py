"""numpy's workload: W5's matrix product ``a @ b`` (OpenBLAS sgemm), the reference for W5.

compare.py removes OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from this worker's environment: set
on the benchmark machine, they make OpenBLAS pick a slower kernel and block size (about half the
speed). `setup` reports which kernel OpenBLAS chose, so the table shows what was measured.
"""

import ctypes
import os

import numpy as np

from . import common

FRAMEWORK = "numpy"
_CORENAME_SYMBOLS = (
    "scipy_openblas_get_corename64_",
    "scipy_openblas_get_corename",
    "openblas_get_corename64_",
    "openblas_get_corename",
)


def _openblas_kernel():
    """The CPU kernel OpenBLAS selected (e.g. "SkylakeX"), or None when it cannot be asked."""
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower()})
        for path in paths:
            library = ctypes.CDLL(path)
            for symbol in _CORENAME_SYMBOLS:
                function = getattr(library, symbol, None)
                if function is not None:
                    function.restype = ctypes.c_char_p
                    return function().decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def _blas_name():
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except (TypeError, KeyError, AttributeError):
        return None


def setup(threads):
    if common.DEVICE == "gpu":
        raise common.NoGpu("numpy computes on the CPU only")
    np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)  # loads and starts OpenBLAS
    return {
        "version": np.__version__,
        "details": {
            "blas": _blas_name(),
            "openblas_kernel": _openblas_kernel(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
            "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE", "(unset)"),
        },
    }


def _sgemm(data):
    a, b = data["a"], data["b"]
    return lambda: a @ b


VARIANTS = {"sgemm": {"a @ b": _sgemm}}


def to_numpy(result):
    return result


def sync(result):
    """numpy returns finished arrays."""
