"""Elementwise functions that give the same bits on every processor.

numpy picks a SIMD kernel for ``exp`` at run time (AVX-512 where the processor has it, else
AVX2 or the C library), and the kernels differ in the last bit. A glued number or a vendored
file computed through them would change with the machine that ran it. These map the C
library's function over an array instead: slower than numpy's kernels, but identical wherever
the same C library runs, which is what a notebook compared bit for bit needs.

Layer: core. Imports nothing from replicaplan.
"""

from __future__ import annotations

import math

import numpy as np

_exp = np.frompyfunc(math.exp, 1, 1)


def exp(x) -> np.ndarray:
    """e**x elementwise, through the C library's exp (``math.exp``), as float64."""
    return np.asarray(_exp(np.asarray(x, dtype=float)), dtype=float)
