"""CPU reference for C = A B in float64."""
import numpy as np

# fp32 accumulation over K: the error grows with sqrt(K).
TOLERANCE = {"C": (1e-5, 1e-4)}


def reference(args, shape):
    M, N, K = shape["M"], shape["N"], shape["K"]
    A = args["A"].astype(np.float64).reshape(M, K)
    B = args["B"].astype(np.float64).reshape(K, N)
    return {"C": A @ B}
