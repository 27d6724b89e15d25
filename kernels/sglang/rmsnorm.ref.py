"""CPU reference for rmsnorm: out = x / sqrt(mean(x^2) + eps) * weight."""
import numpy as np


def reference(args, shape):
    T, H = shape["T"], shape["H"]
    eps = float(args.get("eps", 1e-6))
    x = args["input"].astype(np.float64).reshape(T, H)
    w = args["weight"].astype(np.float64)
    rms = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
    return {"out": x / rms * w}
