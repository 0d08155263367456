"""Go's integer division and ``math.Round`` for Python ints and NumPy arrays.

The resource scorers must give upstream's exact integers: Go's ``/`` on int64 truncates
toward zero (Python's ``//`` floors), and ``math.Round`` rounds half away from zero
(Python's ``round`` rounds half to even). Each helper has a scalar form (the per-node
reference) and an array form (the batch form); both agree bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

I64 = np.int64


def go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: truncates toward zero. ``b`` must not be 0."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def go_div_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise Go integer division; every ``b`` must be non-zero."""
    q = np.abs(a) // np.abs(b)
    return np.asarray(np.where((a < 0) != (b < 0), -q, q), dtype=I64)


def go_round(x: float) -> int:
    """``math.Round``: nearest integer, halves away from zero (``x - trunc(x)`` is exact)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return t


def go_round_array(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.asarray(np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t), dtype=I64)
