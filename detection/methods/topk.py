"""Top-k selection on sparse score rows (only among touched documents) and on dense blocks."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def topk_csr(scores: sp.csr_matrix, k: int, out_idx: np.ndarray, out_val: np.ndarray) -> None:
    """Write the top-k column indices/values of every row of ``scores`` into ``out_idx``/``out_val``.

    Selection looks only at a row's stored entries (the documents the query touched): ``partition`` finds the
    k-th value, the entries at or above it are sorted by descending score then ascending index and the first k
    kept (deterministic at ties). Rows with fewer than k entries are padded with -1 / nan.
    """
    indptr, indices, data = scores.indptr, scores.indices, scores.data
    out_idx.fill(-1)
    out_val.fill(np.nan)
    for i in range(scores.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        n = b - a
        if n == 0:
            continue
        vals = data[a:b]
        cols = indices[a:b]
        if n > k:  # every entry at or above the k-th value, then the k best by (score, index): ties
            # at the cut go to the lower index, so a top-k is the first k of any deeper top list
            kth = -np.partition(-vals, k - 1)[k - 1]
            keep = vals >= kth
            vals = vals[keep]
            cols = cols[keep]
            n = k
        order = np.lexsort((cols, -vals))[:n]
        out_idx[i, :n] = cols[order]
        out_val[i, :n] = vals[order]


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
