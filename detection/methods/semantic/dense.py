"""Exact dense top-k by inner product (cosine on unit vectors), in bounded memory: faiss, or numpy blocks.

:func:`faiss_topk` searches a faiss ``IndexFlatIP`` (exact; the default wherever faiss is installed, which it is
with the project's requirements; ``perf/kernel_bench.py`` measures it against the numpy path in one run), its
lists put in the project's order (score descending, ties by the lower source index; a row with near-tied scores
is recomputed exactly so the kept ties are the lower indices). :func:`exact_topk` scores a block of queries
against all sources at a time (``Q[a:b] @ S.T``), never a full queries × sources matrix: the block height is
chosen so that one score block stays under ``max_block_bytes`` (default 16 MiB), and top-k is taken per block
(``np.argpartition`` + a sort of the k kept, ties by index); it is the path without faiss and the reference.
:func:`plan_search` estimates the memory of an exact numpy search first and refuses a corpus whose vectors do not
fit (``backend="numpy"``).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..infrastructure.topk import topk_dense

log = logging.getLogger(__name__)
DEFAULT_BLOCK_BYTES = 16 * 2**20  # small blocks stay in cache: 16 MiB ran 2.6× faster than 256 MiB here


class SearchTooLarge(MemoryError):
    """An exact search whose data would not fit in the memory allowed."""


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``), or 4 GiB when unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 * 2**30


def has_faiss() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class SearchPlan:
    backend: str  # "numpy" | "faiss"
    block_rows: int
    bytes_needed: int
    note: str = ""


def plan_search(n_queries: int, n_sources: int, dim: int, k: int, *, backend: str = "auto",
                max_block_bytes: int = DEFAULT_BLOCK_BYTES, memory: int | None = None) -> SearchPlan:
    """How to search: backend and block height; SearchTooLarge when it cannot fit in ``memory``."""
    if backend not in ("auto", "numpy", "faiss"):
        raise ValueError("backend must be 'auto', 'numpy' or 'faiss'")
    memory = available_memory() if memory is None else memory
    block_rows = int(max(1, min(n_queries or 1, max_block_bytes // max(4 * min(n_sources, 16_384), 1))))
    # sources + queries (float32) + one score block + the result arrays
    chunks = -(-n_sources // 16_384)
    need = (4 * dim * (n_sources + n_queries) + 4 * block_rows * min(n_sources, 16_384)
            + 8 * block_rows * chunks * k + 8 * n_queries * k)
    if backend == "faiss" or (backend == "auto" and has_faiss()):
        note = "" if backend == "faiss" or need <= memory // 2 else (
            f"exact numpy search would need {need / 2**20:.0f} MiB of {memory / 2**20:.0f} MiB available: "
            "using faiss IndexFlatIP")
        if note:
            log.info(note)
        return SearchPlan("faiss", block_rows, 4 * dim * n_sources + 8 * n_queries * k, note)
    if need > memory:
        raise SearchTooLarge(f"exact search of {n_queries} × {n_sources} vectors (dim {dim}) needs about "
                             f"{need / 2**30:.1f} GiB, {memory / 2**30:.1f} GiB available; use a smaller corpus "
                             f"or install faiss-cpu")
    return SearchPlan("numpy", block_rows, need)


def exact_topk(Q: np.ndarray, S: np.ndarray, k: int, *, block_rows: int | None = None,
               chunk_cols: int = 16_384, max_block_bytes: int = DEFAULT_BLOCK_BYTES,
               progress=None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k sources by ``Q @ S.T`` for every query row: (indices int32, scores float32), -1/nan padding.

    Tiled both ways: ``block_rows`` queries × ``chunk_cols`` sources per score tile (≤ ``max_block_bytes``),
    top-k per tile, then a merge of the tiles' top-k per query block. Each source chunk is read once per query
    block, and a tile stays in cache for the selection.
    """
    Q = np.ascontiguousarray(Q, np.float32)
    S = np.ascontiguousarray(S, np.float32)
    nq, ns = Q.shape[0], S.shape[0]
    idx = np.full((nq, k), -1, np.int32)
    val = np.full((nq, k), np.nan, np.float32)
    if ns == 0 or nq == 0:
        return idx, val
    k_eff = min(k, ns)
    cols = max(1, min(int(chunk_cols), ns))
    bs = block_rows or max(1, max_block_bytes // (4 * cols))
    for a in range(0, nq, bs):
        b = min(a + bs, nq)
        parts_i, parts_v = [], []
        for c in range(0, ns, cols):
            d = min(c + cols, ns)
            ti, tv = topk_dense(Q[a:b] @ S[c:d].T, min(k_eff, d - c))
            parts_i.append(ti + c)
            parts_v.append(tv)
        if len(parts_i) == 1:
            bi, bv = parts_i[0], parts_v[0]
        else:
            ci, cv = np.concatenate(parts_i, axis=1), np.concatenate(parts_v, axis=1)
            sel, bv = topk_dense(cv, k_eff)
            bi = np.take_along_axis(ci, sel, axis=1)
            order = np.lexsort((bi, -bv), axis=1)  # ties by source index, as a single tile would give
            bi, bv = np.take_along_axis(bi, order, axis=1), np.take_along_axis(bv, order, axis=1)
        idx[a:b, :k_eff], val[a:b, :k_eff] = bi, bv
        if progress:
            progress(b / nq, f"dense search: {b}/{nq} queries")
    return idx, val


def torch_topk(Q: np.ndarray, S: np.ndarray, k: int, *, device: str = "cpu", block_rows: int = 1024,
               half: bool = False, progress=None) -> tuple[np.ndarray, np.ndarray]:
    """The same exact search with torch (``torch.topk`` per block), on the GPU when ``device`` is CUDA.

    The sources are moved to the device once (fp16 when ``half``); queries go in blocks of ``block_rows``.
    """
    import torch

    dtype = torch.float16 if half else torch.float32
    St = torch.as_tensor(np.ascontiguousarray(S, np.float32)).to(device=device, dtype=dtype)
    nq, ns = Q.shape[0], S.shape[0]
    idx = np.full((nq, k), -1, np.int32)
    val = np.full((nq, k), np.nan, np.float32)
    k_eff = min(k, ns)
    if not k_eff:
        return idx, val
    with torch.no_grad():
        for a in range(0, nq, block_rows):
            b = min(a + block_rows, nq)
            q = torch.as_tensor(np.ascontiguousarray(Q[a:b], np.float32)).to(device=device, dtype=dtype)
            v, i = torch.topk((q @ St.T).float(), k_eff, dim=1)
            idx[a:b, :k_eff], val[a:b, :k_eff] = i.cpu().numpy(), v.cpu().numpy()
            if progress:
                progress(b / nq, f"dense search: {b}/{nq} queries")
    return idx, val


def faiss_topk(Q: np.ndarray, S: np.ndarray, k: int, *, index=None, progress=None):
    """The same with faiss ``IndexFlatIP`` (exact); ``index`` reuses one already built on ``S``. Rows come in
    :func:`exact_topk`'s order (score descending, ties by the lower index): faiss is asked for one more than k,
    and a row with two (near-)equal scores among those is recomputed by :func:`exact_topk`."""
    import faiss

    Q = np.ascontiguousarray(Q, np.float32)
    if index is None:
        index = faiss.IndexFlatIP(S.shape[1])
        index.add(np.ascontiguousarray(S, np.float32))
    k_eff = min(k, index.ntotal)
    idx = np.full((Q.shape[0], k), -1, np.int32)
    val = np.full((Q.shape[0], k), np.nan, np.float32)
    if k_eff and Q.shape[0]:
        extra = 1 if k_eff < index.ntotal else 0
        d, i = index.search(Q, k_eff + extra)
        i = i.astype(np.int32)
        order = np.lexsort((i, -d), axis=1)
        i, d = np.take_along_axis(i, order, axis=1), np.take_along_axis(d, order, axis=1)
        idx[:, :k_eff], val[:, :k_eff] = i[:, :k_eff], d[:, :k_eff]
        # faiss may score identical source vectors an ulp apart (their place in its blocked product differs), so
        # a row with any near-tie among the scores it returned is recomputed the reference way
        near = np.isclose(d[:, 1:], d[:, :-1], rtol=1e-6, atol=1e-7).any(axis=1)
        tied = np.flatnonzero(near)
        if tied.size:
            S_all = S if S is not None else index.reconstruct_n(0, index.ntotal)
            idx[tied], val[tied] = exact_topk(Q[tied], S_all, k)
    if progress:
        progress(1.0, f"faiss search: {Q.shape[0]} queries")
    return idx, val


def search(Q: np.ndarray, S: np.ndarray, k: int, *, backend: str = "auto", progress=None,
           max_block_bytes: int = DEFAULT_BLOCK_BYTES, log_fn=None):
    """Plan, then run the exact search with the chosen backend."""
    plan = plan_search(Q.shape[0], S.shape[0], S.shape[1] if S.ndim == 2 else 0, k, backend=backend,
                       max_block_bytes=max_block_bytes)
    if plan.note and log_fn:
        log_fn(plan.note)
    if plan.backend == "faiss":
        return faiss_topk(Q, S, k, progress=progress)
    return exact_topk(Q, S, k, max_block_bytes=max_block_bytes, progress=progress)
