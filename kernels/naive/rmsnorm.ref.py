"""CPU reference for rmsnorm: y = x / sqrt(mean(x^2) + eps) * weight."""
import numpy as np


def reference(args, shape):
    eps = float(args.get("eps", 1e-6))
    x = args["x"].astype(np.float64).reshape(shape["rows"], shape["cols"])
    rms = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
    return {"y": x / rms * args["weight"].astype(np.float64)}
