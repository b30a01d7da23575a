"""Top-k selection on dense score blocks (sparse scores are selected inside the kernel, :mod:`.sparse_kernel`)."""
from __future__ import annotations

import numpy as np


def topk_dense(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of every row of a dense float block (k <= columns)."""
    k = min(k, block.shape[1])
    part = np.argpartition(-block, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(block, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    return np.take_along_axis(part, order, axis=1).astype(np.int32), np.take_along_axis(vals, order, axis=1)


def topk_exact(block: np.ndarray, k: int, *, floor: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of every row of a dense block, ties broken by the lower column: the same k items whatever the
    block's other columns, so a top-100 is the first 100 of a top-1000 even at tied scores.

    Only entries above ``floor`` are kept (rows with fewer are padded with -1 / nan). Returns (idx int32,
    val float32), (rows, k), best first."""
    nb, n = block.shape
    out_idx = np.full((nb, k), -1, np.int32)
    out_val = np.full((nb, k), np.nan, np.float32)
    kk = min(k, n)
    if nb == 0 or kk == 0:
        return out_idx, out_val
    vals = np.asarray(block, np.float32)
    if floor is not None:
        vals = np.where(vals > floor, vals, np.float32(-np.inf))
    kth = -np.partition(-vals, kk - 1, axis=1)[:, kk - 1]
    above = vals > kth[:, None]
    eq = (vals == kth[:, None]) & np.isfinite(vals)
    need = kk - above.sum(axis=1)
    take = above | (eq & (np.cumsum(eq, axis=1) <= need[:, None]))
    rows, cols = np.nonzero(take)
    v = vals[rows, cols]
    order = np.lexsort((cols, -v, rows))
    rows, cols, v = rows[order], cols[order], v[order]
    counts = np.bincount(rows, minlength=nb)
    starts = np.cumsum(counts) - counts
    pos = np.arange(rows.size) - starts[rows]
    out_idx[rows, pos] = cols
    out_val[rows, pos] = v
    return out_idx, out_val
