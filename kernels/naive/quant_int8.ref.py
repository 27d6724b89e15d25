"""CPU reference for per-token int8 quantization:
scale = max(max|x| / 127, 1e-10); q = clamp(rint(x / scale), -127, 127).
The kernel's float32 steps (max, one division for the scale, one per element,
rint with ties to even) are each correctly rounded, so they are repeated here
in float32: the expectation is exact and compared exactly."""
import numpy as np

TOLERANCE = {"q": (0.0, 0.0), "scales": (0.0, 0.0)}


def reference(args, shape):
    rows, cols = shape["rows"], shape["cols"]
    x = args["x"].astype(np.float32).reshape(rows, cols)
    amax = np.abs(x).max(axis=1)
    scale = np.maximum(amax / np.float32(127.0), np.float32(1e-10)).astype(np.float32)
    v = np.rint((x / scale[:, None]).astype(np.float32))
    q = np.clip(v, -127, 127).astype(np.int8)
    return {"q": q, "scales": scale}
