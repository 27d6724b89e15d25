"""CPU reference for row layernorm with elementwise affine."""
import numpy as np


def reference(args, shape):
    eps = float(args.get("eps", 1e-5))
    x = args["x"].astype(np.float64).reshape(shape["rows"], shape["cols"])
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * args["weight"].astype(np.float64) + args["bias"]
    return {"y": y}
