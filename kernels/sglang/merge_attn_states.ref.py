"""CPU reference for merge_attn_states (natural-log LSE):
m = max(sa, sb); wa = e^(sa-m); wb = e^(sb-m);
v = (wa va + wb vb) / (wa + wb); s = m + ln(wa + wb)."""
import numpy as np

# s is an fp32 sum of terms around |m| ~ 10: an absolute error of a few ulp of
# m is expected where s crosses 0.
TOLERANCE = {"s_merged": (1e-5, 1e-5)}


def reference(args, shape):
    rows, D = shape["T"] * shape["H"], shape["D"]
    sa = args["s_a"].astype(np.float64)
    sb = args["s_b"].astype(np.float64)
    va = args["v_a"].astype(np.float64).reshape(rows, D)
    vb = args["v_b"].astype(np.float64).reshape(rows, D)
    m = np.maximum(sa, sb)
    wa, wb = np.exp(sa - m), np.exp(sb - m)
    w = wa + wb
    v = (wa[:, None] * va + wb[:, None] * vb) / w[:, None]
    return {"v_merged": v, "s_merged": m + np.log(w)}
