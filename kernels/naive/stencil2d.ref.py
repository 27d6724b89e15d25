"""CPU reference for one five-point Jacobi step, boundary copied. The sums
are done in float32 in the kernel's order, so the expectation is exact up to
the kernel's own roundings."""
import numpy as np


def reference(args, shape):
    H, W = shape["H"], shape["W"]
    a = args["in"].astype(np.float32).reshape(H, W)
    out = a.copy()
    s = a[1:-1, 1:-1] + a[1:-1, :-2]
    s = s + a[1:-1, 2:]
    s = s + a[:-2, 1:-1]
    s = s + a[2:, 1:-1]
    out[1:-1, 1:-1] = np.float32(0.2) * s
    return {"out": out}
