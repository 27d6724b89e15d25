"""CPU reference for SAGE mean aggregation over a CSR block (0 for empty rows)."""
import numpy as np


def reference(args, shape):
    rows, F = shape["rows"], shape["F"]
    rowptr = args["rowptr"].astype(np.int64)
    col = args["col"].astype(np.int64)
    x = args["x"].astype(np.float64).reshape(-1, F)
    deg = np.diff(rowptr)
    seg = np.repeat(np.arange(rows), deg)
    sums = np.zeros((rows, F))
    np.add.at(sums, seg, x[col[: rowptr[-1]]])
    return {"out": sums / np.maximum(deg, 1)[:, None]}
