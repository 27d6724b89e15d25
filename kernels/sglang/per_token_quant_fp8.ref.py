"""CPU reference for per-token fp8 e4m3 quantization:
scale = max(max|x| / 448, 1e-10); output = e4m3(clamp(x / scale, -448, 448)).
The kernel's float32 steps (max, one division for the scale, one per element)
are each correctly rounded, so they are repeated here in float32 and the
result rounded to the nearest e4m3 value (ties to even): the expectation is
exact and compared exactly."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from check_reference import FP8_E4M3  # noqa: E402

TOLERANCE = {"output": (0.0, 0.0)}

# Non-negative finite e4m3 values in code order (codes 0x00..0x7E), increasing.
_POSITIVE = FP8_E4M3[:0x7F].astype(np.float64)


def round_to_e4m3(v):
    """Nearest e4m3 value of each float32 in v (|v| <= 448), ties to even."""
    a = np.abs(v.astype(np.float64))
    hi = np.clip(np.searchsorted(_POSITIVE, a), 1, len(_POSITIVE) - 1)
    lo = hi - 1
    d_lo, d_hi = a - _POSITIVE[lo], _POSITIVE[hi] - a
    code = np.where(d_lo < d_hi, lo, hi)
    code = np.where(d_lo == d_hi, np.where(lo % 2 == 0, lo, hi), code)
    return np.copysign(_POSITIVE[code], v)


def reference(args, shape):
    T, H = shape["T"], shape["H"]
    x = args["input"].astype(np.float32).reshape(T, H)
    absmax = np.abs(x).max(axis=1)
    scale = np.maximum(absmax / np.float32(448.0), np.float32(1e-10)).astype(np.float32)
    q = np.clip(x / scale[:, None], np.float32(-448.0), np.float32(448.0)).astype(np.float32)
    return {"output": round_to_e4m3(q), "scales": scale}
