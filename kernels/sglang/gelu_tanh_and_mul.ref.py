"""CPU reference for gelu_tanh_and_mul: out = gelu_tanh(gate) * up."""
import numpy as np


def reference(args, shape):
    T, d = shape["T"], shape["d"]
    x = args["input"].astype(np.float64).reshape(T, 2 * d)
    gate, up = x[:, :d], x[:, d:]
    inner = np.sqrt(2.0 / np.pi) * (gate + 0.044715 * gate ** 3)
    return {"out": 0.5 * gate * (1.0 + np.tanh(inner)) * up}
