"""CPU reference for y = A x (float64)."""
import numpy as np

# fp32 dot products of length K: the error grows with sqrt(K).
TOLERANCE = {"y": (1e-5, 1e-4)}


def reference(args, shape):
    A = args["A"].astype(np.float64).reshape(shape["M"], shape["K"])
    return {"y": A @ args["x"].astype(np.float64)}
