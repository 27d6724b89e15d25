"""CPU reference for NeoX rotary embedding, in place on query and key:
for i < rot/2, x1 = h[i], x2 = h[i + rot/2], c/s from cos_sin_cache[pos]:
h[i] = x1 c - x2 s; h[i + rot/2] = x2 c + x1 s; the rest of the head is kept."""
import numpy as np


def _rotate(heads, cos, sin, rot):
    # heads [T, H, D]; cos, sin [T, rot/2]
    half = rot // 2
    out = heads.copy()
    x1 = heads[:, :, :half]
    x2 = heads[:, :, half:rot]
    c, s = cos[:, None, :], sin[:, None, :]
    out[:, :, :half] = x1 * c - x2 * s
    out[:, :, half:rot] = x2 * c + x1 * s
    return out


def reference(args, shape):
    T, Hq, Hkv, D, rot = shape["T"], shape["Hq"], shape["Hkv"], shape["D"], shape["rot"]
    pos = args["positions"].astype(np.int64)
    cache = args["cos_sin_cache"].astype(np.float64).reshape(-1, rot)[pos]
    cos, sin = cache[:, : rot // 2], cache[:, rot // 2:]
    q = args["query"].astype(np.float64).reshape(T, Hq, D)
    k = args["key"].astype(np.float64).reshape(T, Hkv, D)
    return {"query": _rotate(q, cos, sin, rot), "key": _rotate(k, cos, sin, rot)}
