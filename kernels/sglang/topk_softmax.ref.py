"""CPU reference for MoE top-k softmax gating. Weights are compared by value;
the expert indices are valid when they are distinct and each has the
probability of its rank, so that experts with equal probability may come in
either order (the kernel's rule, lowest index first, is one valid answer)."""
import numpy as np


def _softmax(logits):
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def reference(args, shape):
    T, E, k = shape["T"], shape["E"], shape["k"]
    renormalize = int(args.get("renormalize", shape.get("renorm", 0)))
    probs = _softmax(args["gating_output"].astype(np.float64).reshape(T, E))
    order = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    top = np.take_along_axis(probs, order, axis=1)
    weights = top / top.sum(axis=1, keepdims=True) if renormalize else top

    def check_indices(actual):
        idx = actual.astype(np.int64).reshape(T, k)
        if idx.min() < 0 or idx.max() >= E:
            t = int(np.argmax((idx < 0).any(axis=1) | (idx >= E).any(axis=1)))
            return f"token {t}: expert index out of [0, {E}): {idx[t].tolist()}"
        for t in range(T):
            if len(set(idx[t].tolist())) != k:
                return f"token {t}: repeated expert in {idx[t].tolist()}"
        got = np.take_along_axis(probs, idx, axis=1)
        bad = np.abs(got - top) > 1e-5 * top + 1e-7
        if bad.any():
            t, j = map(int, np.argwhere(bad)[0])
            return (f"token {t}: rank {j} is expert {idx[t, j]} with p={got[t, j]:.7g}, "
                    f"expected p={top[t, j]:.7g} (expert {order[t, j]})")
        return None

    return {"topk_weights": weights, "topk_indices": check_indices}
