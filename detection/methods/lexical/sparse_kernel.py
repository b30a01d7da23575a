"""The sparse scoring kernel: term-at-a-time accumulate-and-select, compiled with numba.

Every sparse scorer of the project (BM25 and TF-IDF in :mod:`.sparse`, the sparse channels of
:mod:`.multichannel`) scores a block of queries against a term-major weight matrix ``W`` (terms x documents, CSR:
one row of postings per term) with a query matrix ``Q`` (queries x terms, CSR)::

    score(q, d) = sum over the stored entries (q, t) of Q, in stored order, of Q[q, t] * W[t, d]   (float32)

Per query the kernel walks the query's terms and adds each posting's product into a dense per-call float32
buffer, listing the documents it touches; it then selects the top ``k`` of the touched documents, best first —
score descending, then document index ascending (deterministic at ties, so a top-100 is the first 100 of a
top-1000) — and resets only the touched entries (:func:`_select` says how). No score matrix is materialised.

Products and sums are float32 in the order scipy's ``Q @ W`` uses (a document's contributions summed in the
order the query's entries are stored), so scores are the ones the scipy product gives, bit for bit (``reference_topk`` is that
product with a per-row selection; the tests compare the two). Documents whose score is not > 0 are not listed
(scipy's product drops zero sums). Weights must be >= 0 (every scorer here has non-negative weights); a
zero-weight posting contributes nothing.

``min_shared`` (the lemma channel's rule "at least two shared"): a document counts only when at least that many
of the query's stored terms have a posting for it (weight zero or not), otherwise its score is 0.

``dense`` mode (:func:`score_block_dense`) also returns every score of the block as a (queries x documents) array,
accumulated in place of the per-call buffer: the multi-channel retriever fuses its channels over all pairs.

Compiled on first use and cached on disk (``cache=True``: numba's cache next to this file, or its user-wide cache
when that is not writable), so a process pays the compilation (measured in ``perf/kernel_bench.py``)
once per machine, not per call.
"""
from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp
from numba import njit

_F32 = np.float32


_POS_MAX = 0x7F800000  # bit pattern of +inf: a float32 > 0 has bits in 1.._POS_MAX


@njit(cache=True, nogil=True)
def _nth_largest(a, n, r):
    """Reorder ``a[:n]`` (distinct uint64) so that its ``r + 1`` largest come first, the (r+1)-th largest at
    ``a[r]``; returns it (quickselect, median-of-three pivots)."""
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi) // 2
        x, y, z = a[lo], a[mid], a[hi]
        pivot = max(min(x, y), min(max(x, y), z))  # the median of three
        i, j = lo, hi
        while i <= j:
            while a[i] > pivot:
                i += 1
            while a[j] < pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if r <= j:
            hi = j
        elif r >= i:
            lo = i
        else:
            break
    return a[r]


@njit(cache=True, nogil=True)
def _sort_desc(a, n):
    """Sort ``a[:n]`` descending in place (heapsort: a min-heap, then the smallest moved to the end)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)


_RADIX_MIN = 192  # from this many keys on, the radix passes are faster than the heapsort


@njit(cache=True, nogil=True)
def _radix_desc(a, n, tmp, hist):
    """Sort ``a[:n]`` (uint64) descending in place: an LSD radix sort by bytes (stable passes with the buckets
    taken high to low), one counting pass for all eight bytes, a byte the same in every key skipped. ``tmp``
    holds ``n`` keys, ``hist`` is (8, 256) int64. At k = 1,000 it takes the full-corpus BM25 pass from 3.2 to
    2.1 CPU-s against the heapsort (``perf/kernel_bench.py``)."""
    hist[:, :] = 0
    for i in range(n):
        v = a[i]
        for b in range(8):
            hist[b, (v >> np.uint64(8 * b)) & np.uint64(255)] += 1
    src, dst = a, tmp
    in_a = True
    for b in range(8):
        shift = np.uint64(8 * b)
        if hist[b, (a[0] >> shift) & np.uint64(255)] == n:
            continue
        pos = 0
        for d in range(255, -1, -1):
            c = hist[b, d]
            hist[b, d] = pos
            pos += c
        for i in range(n):
            v = src[i]
            d = (v >> shift) & np.uint64(255)
            dst[hist[b, d]] = v
            hist[b, d] += 1
        src, dst = dst, src
        in_a = not in_a
    if not in_a:
        a[:n] = src[:n]


@njit(cache=True, nogil=True)
def _sift(a, i, n):
    v = a[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and a[c + 1] < a[c]:
            c += 1
        if a[c] < v:
            a[i] = a[c]
            i = c
        else:
            break
    a[i] = v


@njit(cache=True, nogil=True)
def _keep_best(keys, nb, k):
    """Move the ``k`` largest of ``keys[:nb]`` to ``keys[:k]`` (any order); returns the smallest of them."""
    return _nth_largest(keys, nb, k - 1)


_SAMPLE = 512  # scores sampled per query to guess the k-th best score


@njit(cache=True, nogil=True)
def _select(bits, touched, nt, reset, counting, cnt, min_shared, vals, sample, keys, k, out_idx, out_bits,
            row, tmp, hist):
    """Write the top ``k`` of the ``nt`` touched documents into ``out_idx[row]`` / ``out_bits[row]``.

    ``bits`` is the score buffer seen as uint32: for scores >= 0 the bit patterns order as the floats, so
    ``(bits << 32) | (2**32 - 1 - document)`` is one uint64 key per document that orders by score descending,
    then index ascending, with no two keys equal. First pass: the touched scores are copied to ``vals`` (the
    buffer's entries zeroed when ``reset``; when ``counting``, documents with fewer than ``min_shared`` shared
    terms read 0 and ``cnt`` is zeroed). A sample of them guesses a score that a little more than ``k`` documents
    reach; second pass: the keys of documents at or above the guess go to ``keys`` (when it fills, its best
    ``k`` are kept and only better keys enter). Fewer than ``k`` got through: the second pass again with a
    guess aimed at twice as many (at last every document). Then the best ``k`` keys, sorted (a radix sort from
    ``_RADIX_MIN`` keys on, else a heapsort: the same order, keys being distinct). The guess changes
    only the work, never the result. A document listed twice in ``touched`` (possible when ``reset``) reads 0
    the second time."""
    for x in range(nt):
        d = touched[x]
        b = bits[d]
        if reset:
            bits[d] = 0
        if counting:
            c = cnt[d]
            cnt[d] = 0
            if c < min_shared:
                bits[d] = 0
                b = 0
        vals[x] = b
    cap = keys.shape[0]
    want = k + k // 4 + 8  # documents the guess aims to let through; doubled after a guess that let too few
    n_sample = 0
    if nt > 4 * _SAMPLE:  # every step-th score, made distinct (and ordered as the scores) by its position
        step = nt // _SAMPLE
        n_sample = _SAMPLE
        for x in range(_SAMPLE):
            sample[x] = (np.uint64(vals[x * step]) << np.uint64(32)) | np.uint64(x)
    while True:
        guess = np.uint32(1)
        above = (want * n_sample) // max(nt, 1) + 1  # sampled scores expected at or above the guess
        if want < nt and above < n_sample:
            guess = max(np.uint32(_nth_largest(sample, n_sample, above - 1) >> np.uint64(32)), np.uint32(1))
        nb = 0
        thr = np.uint64(0)
        for x in range(nt):
            b = vals[x]
            if b < guess or b > _POS_MAX:  # below the guess, zero, negative or nan
                continue
            key = (np.uint64(b) << np.uint64(32)) | np.uint64(0xFFFFFFFF - touched[x])
            if key > thr:
                keys[nb] = key
                nb += 1
                if nb == cap:
                    thr = _keep_best(keys, nb, k)
                    nb = k
        if nb >= k or guess == 1:
            break
        want *= 2
    if nb > k:
        _keep_best(keys, nb, k)
        nb = k
    if nb >= _RADIX_MIN:
        _radix_desc(keys, nb, tmp, hist)
    else:
        _sort_desc(keys, nb)
    for r in range(nb):
        key = keys[r]
        out_idx[row, r] = np.int32(0xFFFFFFFF - (key & np.uint64(0xFFFFFFFF)))
        out_bits[row, r] = np.uint32(key >> np.uint64(32))


@njit(cache=True, nogil=True)
def _score_rows(q_indptr, q_indices, q_data, w_indptr, w_indices, w_data, k, counting, min_shared, acc, cnt,
                dense, touched, out_idx, out_val):
    """The kernel. ``dense``: when it has rows, query i accumulates into ``dense[i]`` (kept; ``counting`` must be
    on); otherwise into ``acc`` (reset after each query). When ``counting``, ``cnt`` counts the shared terms per
    document and marks the touched ones; otherwise a document is listed when its score is still 0 before the
    add (branch-free; a zero product can list a document twice, so ``touched`` must hold a query's postings)."""
    nq = q_indptr.shape[0] - 1
    keep_dense = dense.shape[0] > 0
    keys = np.empty(4 * k + 16, np.uint64)
    vals = np.empty(touched.shape[0], np.uint32)
    sample = np.empty(_SAMPLE, np.uint64)
    tmp = np.empty(k, np.uint64)
    hist = np.empty((8, 256), np.int64)
    out_bits = out_val.view(np.uint32)
    for qi in range(nq):
        buf = dense[qi] if keep_dense else acc
        nt = 0
        for jj in range(q_indptr[qi], q_indptr[qi + 1]):
            t = q_indices[jj]
            qv = q_data[jj]
            if counting:
                for p in range(w_indptr[t], w_indptr[t + 1]):
                    d = w_indices[p]
                    c = cnt[d]
                    touched[nt] = d
                    nt += c == 0
                    cnt[d] = c + 1
                    buf[d] += qv * w_data[p]
            else:
                for p in range(w_indptr[t], w_indptr[t + 1]):
                    d = w_indices[p]
                    a = buf[d]
                    touched[nt] = d
                    nt += a == 0
                    buf[d] = a + qv * w_data[p]
        _select(buf.view(np.uint32), touched, nt, not keep_dense, counting, cnt, min_shared, vals, sample, keys, k,
                out_idx, out_bits, qi, tmp, hist)


@njit(cache=True, nogil=True)
def _dense_rows(block, k, out_idx, out_val):
    """:func:`_select` on every row of a dense float32 block, every column touched (0 and below never listed)."""
    nq, n = block.shape
    touched = np.arange(n).astype(np.int32)
    vals = np.empty(n, np.uint32)
    keys = np.empty(4 * k + 16, np.uint64)
    sample = np.empty(_SAMPLE, np.uint64)
    tmp = np.empty(k, np.uint64)
    hist = np.empty((8, 256), np.int64)
    cnt = np.zeros(1, np.int32)
    out_bits = out_val.view(np.uint32)
    for qi in range(nq):
        _select(block[qi].view(np.uint32), touched, n, False, False, cnt, 1, vals, sample, keys, k, out_idx, out_bits,
                qi, tmp, hist)


def topk_positive(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` of every row of a dense score block among its entries > 0, best first (score desc, column asc),
    padded with -1 / nan: ``infrastructure.topk.topk_exact(block, k, floor=0.0)`` without its full-block passes
    (the same lists; the multi-channel retriever's candidate and semantic selections)."""
    block = np.ascontiguousarray(block, dtype=_F32)
    if block.ndim != 2:
        raise ValueError("block must be two-dimensional")
    if int(k) < 1:
        raise ValueError("k must be >= 1")
    k = int(k)
    out_idx = np.full((block.shape[0], k), -1, np.int32)
    out_val = np.full((block.shape[0], k), np.nan, _F32)
    if block.shape[0]:
        _dense_rows(block, k, out_idx, out_val)
    return out_idx, out_val


def _csr_parts(m: sp.csr_matrix):
    return (np.ascontiguousarray(m.indptr, dtype=np.int64), np.ascontiguousarray(m.indices, dtype=np.int32),
            np.ascontiguousarray(m.data, dtype=_F32))


class Postings:
    """A term-major weight matrix ``W`` checked once (CSR, weights >= 0) and laid out for the kernel, with the
    per-call score buffers it reuses (one set per thread; the kernel leaves them zeroed). A retriever makes it at
    fit time and scores every query block against it; :func:`score_topk` also takes a plain matrix (checked
    on each call)."""

    def __init__(self, W: sp.csr_matrix):
        if not sp.issparse(W):
            raise TypeError("W must be a scipy sparse matrix")
        W = W.tocsr()
        if W.nnz and W.data.min() < 0:
            raise ValueError("the sparse kernel takes non-negative weights only")
        self.shape = W.shape
        self.parts = _csr_parts(W)
        self.row_len = np.diff(self.parts[0])
        self._local = threading.local()

    def buffers(self, counting: bool) -> tuple[np.ndarray, np.ndarray]:
        """(score buffer, shared-term counts) of this thread, all zero."""
        local = self._local
        if getattr(local, "acc", None) is None:
            local.acc, local.cnt = np.zeros(self.shape[1], _F32), np.zeros(self.shape[1], np.int32)
        return (local.acc, local.cnt) if counting else (local.acc, local.cnt[:1])

    def touched_size(self, Q: sp.csr_matrix, counting: bool) -> int:
        """Room for one query's touched list: its postings (a document may be listed once per posting when not
        counting), at most the documents when counting; one more for the branch-free write past the end."""
        cum = np.concatenate([[0], np.cumsum(self.row_len[Q.indices], dtype=np.int64)])
        most = int((cum[Q.indptr[1:]] - cum[Q.indptr[:-1]]).max(initial=0))
        return (min(most, self.shape[1]) if counting else most) + 1


def _checked(Q: sp.csr_matrix, W, k: int) -> tuple[sp.csr_matrix, Postings]:
    if not sp.issparse(Q):
        raise TypeError("Q must be a scipy sparse matrix")
    W = W if isinstance(W, Postings) else Postings(W)
    Q = Q.tocsr()
    if Q.shape[1] != W.shape[0]:
        raise ValueError(f"Q has {Q.shape[1]} columns but W has {W.shape[0]} rows")
    if int(k) < 1:
        raise ValueError("k must be >= 1")
    if Q.nnz and Q.data.min() < 0:
        raise ValueError("the sparse kernel takes non-negative weights only")
    return Q, W


def score_topk(Q: sp.csr_matrix, W, k: int, *, min_shared: int = 1,
               out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` documents of every query row of ``Q`` under ``Q @ W`` (``W``: a :class:`Postings` or a sparse
    matrix): (indices int32, scores float32), each (queries, k), best first (score desc, index asc), padded with
    -1 / nan. ``out`` may give the two arrays to write into."""
    Q, P = _checked(Q, W, k)
    k = int(k)
    nq = Q.shape[0]
    if out is None:
        out = (np.empty((nq, k), np.int32), np.empty((nq, k), _F32))
    out_idx, out_val = out
    out_idx.fill(-1)
    out_val.fill(np.nan)
    counting = int(min_shared) > 1
    acc, cnt = P.buffers(counting)
    touched = np.empty(P.touched_size(Q, counting), np.int32)
    _score_rows(*_csr_parts(Q), *P.parts, k, counting, int(min_shared), acc, cnt, np.zeros((0, 0), _F32),
                touched, out_idx, out_val)
    return out_idx, out_val


def score_block_dense(Q: sp.csr_matrix, W, k: int, *, min_shared: int = 1
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every score of ``Q @ W`` as a dense float32 (queries x documents) array (0 where a document has fewer
    than ``min_shared`` shared terms), with each row's top ``k`` as :func:`score_topk` gives it:
    (scores, indices, values)."""
    Q, P = _checked(Q, W, k)
    k = int(k)
    nq, n_docs = Q.shape[0], P.shape[1]
    dense = np.zeros((nq, n_docs), _F32)
    out_idx = np.full((nq, k), -1, np.int32)
    out_val = np.full((nq, k), np.nan, _F32)
    _, cnt = P.buffers(True)
    touched = np.empty(P.touched_size(Q, True), np.int32)
    _score_rows(*_csr_parts(Q), *P.parts, k, True, max(1, int(min_shared)), np.zeros(0, _F32), cnt, dense,
                touched, out_idx, out_val)
    return dense, out_idx, out_val


def reference_topk(Q: sp.csr_matrix, W: sp.csr_matrix, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The same top-k lists the way the project computed them before the kernel: scipy's sparse product, then
    per row a partition and a (score desc, index asc) sort of the stored entries. Slow (it writes every touched
    score to a CSR matrix); kept as the reference the tests and ``perf/kernel_bench.py`` check the kernel
    against."""
    if not sp.issparse(W):
        raise TypeError("W must be a scipy sparse matrix")
    Q, _ = _checked(Q, W, k)
    S = (Q @ W.tocsr()).tocsr()
    out_idx = np.full((Q.shape[0], k), -1, np.int32)
    out_val = np.full((Q.shape[0], k), np.nan, _F32)
    for i in range(S.shape[0]):
        a, b = S.indptr[i], S.indptr[i + 1]
        vals, cols = S.data[a:b], S.indices[a:b]
        keep = vals > 0
        vals, cols = vals[keep], cols[keep]
        n = min(k, vals.size)
        if vals.size > k:
            kth = -np.partition(-vals, k - 1)[k - 1]
            sel = vals >= kth
            vals, cols = vals[sel], cols[sel]
        order = np.lexsort((cols, -vals))[:n]
        out_idx[i, :n] = cols[order]
        out_val[i, :n] = vals[order]
    return out_idx, out_val


def warm_up() -> None:
    """Compile (or load from numba's cache) every specialisation the project calls, on a tiny problem."""
    Q = sp.csr_matrix(np.array([[1.0, 0.0], [0.5, 2.0]], _F32))
    W = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]], _F32))
    score_topk(Q, W, 2)
    score_topk(Q, W, 2, min_shared=2)
    score_block_dense(Q, W, 2)
    score_block_dense(Q, W, 2, min_shared=2)
    topk_positive(np.ones((2, 3), _F32), 2)
