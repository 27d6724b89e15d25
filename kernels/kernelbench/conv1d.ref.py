"""CPU reference for the direct 1-D convolution (stride 1, no padding, bias)."""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

TOLERANCE = {"out": (1e-5, 1e-5)}


def reference(args, shape):
    B, C, O, L, K = shape["B"], shape["IC"], shape["OC"], shape["L"], shape["K"]
    x = args["x"].astype(np.float64).reshape(B, C, L)
    w = args["weight"].astype(np.float64).reshape(O, C, K)
    windows = sliding_window_view(x, K, axis=2)  # [B, C, L - K + 1, K]
    out = np.einsum("bclk,ock->bol", windows, w) + args["bias"].astype(np.float64)[None, :, None]
    return {"out": out}
