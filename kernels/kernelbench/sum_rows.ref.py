"""CPU reference for the sum over the last dimension."""
import numpy as np

# fp32 partial sums of cols normal values: the error grows with sqrt(cols).
TOLERANCE = {"out": (1e-5, 1e-4)}


def reference(args, shape):
    x = args["x"].astype(np.float64).reshape(shape["rows"], shape["cols"])
    return {"out": x.sum(axis=1)}
