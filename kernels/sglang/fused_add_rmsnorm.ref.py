"""CPU reference for fused_add_rmsnorm (in place on both buffers):
r <- x + r; x <- r / sqrt(mean(r^2) + eps) * weight. Both in-outs are checked:
the residual must hold x + r, not its old value."""
import numpy as np


def reference(args, shape):
    T, H = shape["T"], shape["H"]
    eps = float(args.get("eps", 1e-6))
    x = args["input"].astype(np.float64).reshape(T, H)
    r = x + args["residual"].astype(np.float64).reshape(T, H)
    w = args["weight"].astype(np.float64)
    rms = np.sqrt(np.mean(r * r, axis=1, keepdims=True) + eps)
    return {"input": r / rms * w, "residual": r}
