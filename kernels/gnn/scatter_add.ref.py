"""CPU reference for out[index[e], :] += src[e, :] (out accumulated in place)."""
import numpy as np

# fp32 atomics add in any order.
TOLERANCE = {"out": (1e-5, 1e-5)}


def reference(args, shape):
    E, N, F = shape["E"], shape["N"], shape["F"]
    out = args["out"].astype(np.float64).reshape(N, F).copy()
    np.add.at(out, args["index"].astype(np.int64), args["src"].astype(np.float64).reshape(E, F))
    return {"out": out}
