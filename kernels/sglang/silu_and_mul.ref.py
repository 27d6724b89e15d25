"""CPU reference for silu_and_mul: out = silu(gate) * up, input = [gate | up]."""
import numpy as np


def reference(args, shape):
    T, d = shape["T"], shape["d"]
    x = args["input"].astype(np.float64).reshape(T, 2 * d)
    gate, up = x[:, :d], x[:, d:]
    with np.errstate(over="ignore"):
        return {"out": gate / (1.0 + np.exp(-gate)) * up}
