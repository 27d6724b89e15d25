"""Validity check for one hop of uniform neighbour sampling without
replacement. Row i of out (fanout slots) must hold min(deg, fanout) distinct
neighbours of nodes[i] in its first slots and -1 after them. Beyond what the
engine's neighbor_sample check asks, the positions drawn among the neighbour
lists of the nodes with deg > fanout must look uniform: their mean relative
position (offset + 0.5) / deg must be within 6 standard errors of 1/2, which
a sampler that keeps the first fanout neighbours fails."""
import numpy as np


def reference(args, shape):
    rowptr = args["rowptr"].astype(np.int64)
    col = args["col"].astype(np.int64)
    nodes = args["nodes"].astype(np.int64)
    n, fanout = shape["n"], shape["fanout"]

    def check(actual):
        out = actual.astype(np.int64).reshape(n, fanout)
        positions = []
        for i in range(n):
            v = int(nodes[i])
            start, end = int(rowptr[v]), int(rowptr[v + 1])
            neigh = col[start:end]
            want = min(end - start, fanout)
            row = out[i]
            head, tail = row[:want], row[want:]
            if (tail != -1).any() or (head < 0).any():
                return (f"row {i} (node {v}, degree {end - start}): expected {want} "
                        f"neighbours then -1, got {row.tolist()}")
            if len(set(head.tolist())) != want:
                return f"row {i} (node {v}): repeated neighbour in {row.tolist()}"
            where = {int(c): j for j, c in enumerate(neigh)}
            missing = [int(c) for c in head if int(c) not in where]
            if missing:
                return (f"row {i} (node {v}): {missing[0]} is not a neighbour "
                        f"(row {row.tolist()})")
            if end - start > fanout:
                positions.extend((where[int(c)] + 0.5) / (end - start) for c in head)
        if len(positions) >= 200:
            mean = float(np.mean(positions))
            stderr = np.sqrt(1.0 / 12.0 / len(positions))
            if abs(mean - 0.5) > 6 * stderr:
                return (f"not uniform: the mean relative position of the {len(positions)} "
                        f"sampled neighbours is {mean:.4f}, expected 0.5 +- {6 * stderr:.4f}")
        return None

    return {"out": check}
