"""Tesserae-style scoring (Forstall, Coffee, Buckmaster & Jacobson, "Modeling the scholars: detecting
intertextuality through enhanced word-level n-gram matching", DSH 30(4), 2015; Tesserae v3 ``read_table.pl``).

A (query, source) pair is a candidate when the two segments share at least two distinct lemmas outside the
stoplist (default: the 10 most frequent lemmas of the two corpora together, as Tesserae does). Its score is

    score = ln( (sum_{matched tokens in q} 1/f_q(t) + sum_{matched tokens in s} 1/f_s(t)) / (d_q + d_s) )

where f(t) is the relative frequency of the token's lemma in its own corpus side and d is, per segment, the
distance spanned by the two matched tokens of lowest frequency (ties: the earlier token; adjacent words: d = 2).

Implementation: every term of every pair comes out of two sparse products per block of queries, so no
Python code runs per pair. Within a segment, rank the vocabulary tokens by (frequency, position) and give the
first token of each lemma the weight 2^-rank. A sum of distinct powers of two is exact in a double while
its ranks lie within 52 of each other, and its two leading bits are the two lowest ranks among the
lemmas it sums. So the complex products

    (Qw + i·Eq) @ Sb  ->  real: sum over shared lemmas of n_q/f_q,  imaginary: bit set of q's shared ranks
    Qb @ (Sw + i·Es)  ->  real: sum over shared lemmas of n_s/f_s,  imaginary: bit set of s's shared ranks

give the numerator (both halves summed in the same order as the binary x weighted products of the
per-pair version, so bit for bit the same) and, for each side, the shared-lemma count (bits set) and the
two matched tokens of lowest (frequency, position): the first is the lemma with the lowest rank, the second
is either that lemma's next token or the next shared lemma. Segments with more than 52 vocabulary tokens get
their higher ranks in further windows of 52, each a real product restricted to those segments' entries.
Per query the top k are chosen among its candidates by the ratio numerator / (d_q + d_s); the scores
(``math.log`` of it, as in the per-pair version) are computed for those only, ties broken by source index.

``tesserae_reference.TesseraeReference`` is the per-pair implementation this replaced (≈ 800 s for the
27,238 Loci Similes queries); tests and ``perf/tesserae_bench.py`` check that both return the same lists and
bit-identical scores. Memory: one block of queries × all sources as sparse products (≈ 22 k entries per query).
"""
from __future__ import annotations

import math
import multiprocessing as mp
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from detection.latin.analysis import Analyzer

from ..infrastructure import index_files
from ..retriever import Progress, Retriever, TopK

WINDOW = 52  # ranks per window: 2^0 .. 2^-51 add up exactly in a double's 53-bit significand
_MANT = (np.int64(1) << np.int64(52)) - np.int64(1)


@dataclass
class _Side:
    """One corpus side's vocabulary tokens, segment by segment.

    Tokens of segment i are ``ptr[i]:ptr[i+1]`` in key order (frequency, position); ``kpos`` holds their
    positions in the segment's lemma list, ``next2`` for the first token of a lemma the rank of its second
    token (-1 if none). Entries (segment, lemma), sorted by segment then lemma id, carry the count ``e_n``
    and the rank ``e_r1`` of the lemma's first token.
    """

    ptr: np.ndarray
    kpos: np.ndarray
    next2: np.ndarray
    e_ptr: np.ndarray
    e_seg: np.ndarray
    e_lem: np.ndarray
    e_n: np.ndarray
    e_r1: np.ndarray

    @property
    def long(self) -> np.ndarray:
        """Segments whose ranks need more than one window."""
        return np.diff(self.ptr) > WINDOW


def _side(docs: list[list[str]], vocab: dict[str, int], freq: np.ndarray) -> _Side:
    lengths = np.fromiter((len(d) for d in docs), np.int64, len(docs))
    get = vocab.get
    flat = np.fromiter((get(l, -1) for d in docs for l in d), np.int64, int(lengths.sum()))
    seg_all = np.repeat(np.arange(len(docs), dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    inv = np.flatnonzero(flat >= 0)
    ids_a, seg_a = flat[inv], seg_all[inv]
    pos_a = (inv - starts[seg_a]).astype(np.int32)
    ptr = np.zeros(len(docs) + 1, np.int64)
    np.cumsum(np.bincount(seg_a, minlength=len(docs)), out=ptr[1:])
    korder = np.lexsort((pos_a, freq[ids_a], seg_a))
    rank = np.empty(len(ids_a), np.int64)
    rank[korder] = np.arange(len(ids_a)) - ptr[seg_a[korder]]
    lorder = np.lexsort((pos_a, ids_a, seg_a))
    lem, sg, rk = ids_a[lorder], seg_a[lorder], rank[lorder]
    start = np.ones(len(lem), bool)
    start[1:] = (lem[1:] != lem[:-1]) | (sg[1:] != sg[:-1])
    first = np.flatnonzero(start)
    n = np.diff(np.append(first, len(lem)))
    next2 = np.full(len(lem), -1, np.int64)
    two = first[n >= 2]
    next2[ptr[sg[two]] + rk[two]] = rk[two + 1]
    e_ptr = np.zeros(len(docs) + 1, np.int64)
    np.cumsum(np.bincount(sg[first], minlength=len(docs)), out=e_ptr[1:])
    return _Side(ptr=ptr, kpos=pos_a[korder], next2=next2, e_ptr=e_ptr, e_seg=sg[first], e_lem=lem[first],
                 e_n=n, e_r1=rk[first])


def _bits(rank: np.ndarray, window: int) -> np.ndarray:
    """2^-(rank - 52 * window) for ranks in that window, 0 elsewhere."""
    local = rank - WINDOW * window
    inside = (local >= 0) & (local < WINDOW)
    return np.where(inside, np.ldexp(1.0, -np.clip(local, 0, WINDOW - 1)), 0.0)


def _lead(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sums of distinct powers 2^-r (r < 52): the lowest r and the sum without it."""
    e = np.frexp(m)[1]
    return 1 - e.astype(np.int64), m - np.ldexp(1.0, e - 1)


def _popcount(m: np.ndarray) -> np.ndarray:
    return np.bitwise_count(np.ldexp(m, WINDOW - 1).astype(np.int64))


def _first_two(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lowest and second-lowest rank and the number of ranks, over windows (columns) of bit-set sums."""
    n, nw = masks.shape
    ra = np.full(n, -1, np.int64)
    rb = np.full(n, -1, np.int64)
    count = np.zeros(n, np.int64)
    for w in range(nw):
        idx = np.flatnonzero(masks[:, w] > 0)
        if not len(idx):
            continue
        m = masks[idx, w]
        r1, rest = _lead(m)
        r2 = np.where(rest > 0, _lead(np.where(rest > 0, rest, 1.0))[0], -1 - WINDOW * w)
        count[idx] += _popcount(m)
        new = ra[idx] < 0
        ra[idx[new]] = r1[new] + WINDOW * w
        rb[idx[new]] = r2[new] + WINDOW * w
        more = ~new & (rb[idx] < 0)
        rb[idx[more]] = r1[more] + WINDOW * w
    return ra, rb, count


def _window_masks(rows, cols, n_cols, base, extra) -> np.ndarray:
    """Window-0 sums ``base`` plus the sums of further windows (sparse products) for the entries ``rows/cols``."""
    masks = np.zeros((len(rows), 1 + len(extra)))
    masks[:, 0] = base
    if not extra:
        return masks
    keys = rows * n_cols + cols
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    for w, prod in enumerate(extra, 1):
        prod = prod.tocoo()
        k = prod.row.astype(np.int64) * n_cols + prod.col
        at = np.minimum(np.searchsorted(sorted_keys, k), len(sorted_keys) - 1)
        ok = sorted_keys[at] == k  # pairs outside ``rows/cols`` (not candidates) are not needed
        masks[order[at[ok]], w] = prod.data[ok]
    return masks


def _distance(side: _Side, seg: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> np.ndarray:
    base = side.ptr[seg]
    second = side.next2[base + ra]
    second = np.where((second >= 0) & ((second < rb) | (rb < 0)), second, rb)
    if (second < 0).any():
        raise AssertionError("tesserae: a candidate with fewer than two matched tokens")
    return np.abs(side.kpos[base + ra] - side.kpos[base + second]) + 1


_WORKER: dict = {}


class TesseraeRetriever(Retriever):
    name = "tesserae"

    def __init__(self, stop_top: int = 10, cache_dir=None, block_size: int = 64, n_jobs: int = 1, **_ignored):
        self.analyzer = Analyzer("lemma", 1, stopwords=False, cache_dir=cache_dir)
        self.stop_top = stop_top
        self.block_size = int(block_size)
        self.n_jobs = max(1, int(n_jobs or 1))
        self._queries = None
        self._state = None

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None):
        self.source_ids = self._check_fit(source_ids, source_texts)
        self.src_lemmas = self.analyzer(source_texts, progress=progress)
        self.src_counts = Counter(l for ls in self.src_lemmas for l in ls)
        self._queries = self._state = None
        return self

    def index_arrays(self) -> dict | None:
        """The fitted sources as arrays (``detection.methods.infrastructure.index_files``): the lemmas in order of first
        occurrence, every segment's lemma ids end to end and their lengths, the source ids."""
        if getattr(self, "src_lemmas", None) is None:
            return None
        vocab: dict[str, int] = {}
        flat = np.fromiter((vocab.setdefault(lem, len(vocab)) for ls in self.src_lemmas for lem in ls), np.int32)
        return {"lemmas": index_files.strings(vocab), "lemma_ids": flat,
                "lengths": np.fromiter(map(len, self.src_lemmas), np.int64, len(self.src_lemmas)),
                "source_ids": index_files.strings(self.source_ids)}

    def use_index_arrays(self, arrays: dict) -> None:
        """Become the retriever :meth:`index_arrays` was taken from (same lemma lists, same counts in the same
        order, so the same stoplist ties)."""
        lemmas = arrays["lemmas"].tolist()
        words = [lemmas[i] for i in arrays["lemma_ids"].tolist()]
        ends = np.cumsum(arrays["lengths"]).tolist()
        self.src_lemmas = [words[a:b] for a, b in zip([0] + ends[:-1], ends)]
        counts = np.bincount(arrays["lemma_ids"], minlength=len(lemmas)).tolist()
        self.src_counts = Counter(dict(zip(lemmas, counts)))
        self.source_ids = arrays["source_ids"].tolist()
        self._queries = self._state = None

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        return self.search_lemmas(self.analyzer(query_texts), k, progress=progress)

    def search_range(self, query_texts, k: int, start: int, stop: int, *, progress: Progress | None = None) -> TopK:
        """Rows start..stop-1 of ``search(query_texts)``: the stoplist and frequencies come from all queries.

        The analysed queries and the tables built from them are kept for the next range of the same
        ``query_texts`` object (a worker running several shards of one job builds them once)."""
        if self._queries is None or self._queries[0] is not query_texts:
            self._queries = (query_texts, self.analyzer(query_texts))
        return self.search_lemmas(self._queries[1], k, rows=(start, stop), keep=True, progress=progress)

    def search_lemmas(self, q_lemmas: list[list[str]], k: int, *, rows: tuple[int, int] | None = None,
                      keep: bool = False, progress: Progress | None = None) -> TopK:
        """``search`` on query segments already analysed (lemma lists, stopwords kept); ``rows``: only
        queries start..stop-1 are scored (statistics still over all of ``q_lemmas``); ``keep``: keep the
        tables built for ``q_lemmas`` for the next call with the same list."""
        k = int(k)
        if k < 1:
            raise ValueError("k must be >= 1")
        first, last = rows or (0, len(q_lemmas))
        if self._state is not None and self._state[0] is q_lemmas:
            state = dict(self._state[1], k=k)
        else:
            state = dict(self._prepare(q_lemmas), k=k)
            self._state = (q_lemmas, state) if keep else None
        nq = last - first
        idx = np.full((nq, k), -1, np.int32)
        val = np.full((nq, k), np.nan, np.float32)
        blocks = [(a, min(a + self.block_size, last)) for a in range(first, last, self.block_size)]
        _WORKER.update(state)
        try:
            done = 0
            if self.n_jobs > 1 and len(blocks) > 1 and "fork" in mp.get_all_start_methods():
                with ProcessPoolExecutor(self.n_jobs, mp_context=mp.get_context("fork")) as ex:
                    for (a, b), (bi, bv) in zip(blocks, ex.map(_score_block, blocks)):
                        idx[a - first:b - first], val[a - first:b - first] = bi, bv
                        done += b - a
                        if progress:
                            progress(done / max(nq, 1), f"tesserae: scored {done}/{nq} queries")
            else:
                for a, b in blocks:
                    idx[a - first:b - first], val[a - first:b - first] = _score_block((a, b))
                    done += b - a
                    if progress:
                        progress(done / max(nq, 1), f"tesserae: scored {done}/{nq} queries")
        finally:
            _WORKER.clear()
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)

    def _prepare(self, q_lemmas: list[list[str]]) -> dict:
        """Vocabulary, frequencies, token tables and source postings for this query corpus."""
        q_counts = Counter(l for ls in q_lemmas for l in ls)
        stop = {l for l, _ in (self.src_counts + q_counts).most_common(self.stop_top)}
        terms = sorted(set(self.src_counts) & set(q_counts) - stop)
        vocab = {l: i for i, l in enumerate(terms)}
        ns, nq_tok = max(sum(self.src_counts.values()), 1), max(sum(q_counts.values()), 1)
        f_s = np.array([self.src_counts[l] / ns for l in terms], np.float64)
        f_q = np.array([q_counts[l] / nq_tok for l in terms], np.float64)
        qside, sside = _side(q_lemmas, vocab, f_q), _side(self.src_lemmas, vocab, f_s)
        n_src, n_voc = len(self.src_lemmas), len(terms)
        # V x N postings (lemma-major, source ids ascending), one per window of source ranks
        s_by_lem = np.lexsort((sside.e_seg, sside.e_lem))
        lem, seg = sside.e_lem[s_by_lem], sside.e_seg[s_by_lem]
        indptr = np.zeros(n_voc + 1, np.int64)
        np.cumsum(np.bincount(lem, minlength=n_voc), out=indptr[1:])
        r1 = sside.e_r1[s_by_lem]
        sw = sside.e_n[s_by_lem] * (1.0 / f_s)[lem]

        def postings(data, keep=None):
            if keep is None:
                return sp.csr_matrix((data, seg, indptr), shape=(n_voc, n_src))
            ip = np.zeros(n_voc + 1, np.int64)
            np.cumsum(np.bincount(lem[keep], minlength=n_voc), out=ip[1:])
            return sp.csr_matrix((data[keep], seg[keep], ip), shape=(n_voc, n_src))

        ones = np.ones(len(lem))
        n_win_s = int(-(-np.diff(sside.ptr).max(initial=0) // WINDOW))
        return {
            "qside": qside, "sside": sside, "wq": 1.0 / f_q, "n_src": n_src, "n_voc": n_voc,
            "Sb": postings(ones), "Sc": postings(ones.astype(np.complex128)),
            "Sx": postings(sw + 1j * _bits(r1, 0)),
            "S_win": [postings(_bits(r1, w), (r1 // WINDOW) == w) for w in range(1, n_win_s)],
        }


def _query_block(qside: _Side, a: int, b: int, n_voc: int, data: np.ndarray, keep=None) -> sp.csr_matrix:
    e0, e1 = qside.e_ptr[a], qside.e_ptr[b]
    rows = qside.e_seg[e0:e1] - a
    cols = qside.e_lem[e0:e1]
    if keep is not None:
        rows, cols, data = rows[keep], cols[keep], data[keep]
    ip = np.zeros(b - a + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=b - a), out=ip[1:])
    return sp.csr_matrix((data, cols, ip), shape=(b - a, n_voc))


def _score_block(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Top-k source indices and scores for queries a..b-1 (state in ``_WORKER``)."""
    a, b = span
    st = _WORKER
    qside, sside, k, n_src, n_voc = st["qside"], st["sside"], st["k"], st["n_src"], st["n_voc"]
    e0, e1 = qside.e_ptr[a], qside.e_ptr[b]
    q_r1 = qside.e_r1[e0:e1]
    qw = qside.e_n[e0:e1] * st["wq"][qside.e_lem[e0:e1]]
    p1 = (_query_block(qside, a, b, n_voc, qw + 1j * _bits(q_r1, 0)) @ st["Sc"]).tocsr()
    p2 = (_query_block(qside, a, b, n_voc, np.ones(e1 - e0, np.complex128)) @ st["Sx"]).tocsr()
    if not (np.array_equal(p1.indptr, p2.indptr) and np.array_equal(p1.indices, p2.indices)):
        p1.sort_indices()
        p2.sort_indices()
    mq = p1.data.imag
    # candidates: >= 2 shared lemmas, read off the query side's bit sets (exact for queries of <= 52 tokens)
    cand = (mq.view(np.int64) & _MANT) != 0
    long_rows = np.flatnonzero(qside.long[a:b])
    if len(long_rows):
        sub = np.concatenate([np.arange(p1.indptr[r], p1.indptr[r + 1]) for r in long_rows])
        sub_rows = np.repeat(long_rows, np.diff(p1.indptr)[long_rows])
        extra = []
        for w in range(1, int(-(-np.diff(qside.ptr[a:b + 1]).max() // WINDOW))):
            keep = (q_r1 // WINDOW) == w
            extra.append(_query_block(qside, a, b, n_voc, _bits(q_r1, w), keep) @ st["Sb"])
        masks = _window_masks(sub_rows, p1.indices[sub].astype(np.int64), n_src, mq[sub], extra)
        long_ra, long_rb, count = _first_two(masks)
        cand[sub] = count >= 2
    counts = np.array([np.count_nonzero(cand[p1.indptr[i]:p1.indptr[i + 1]]) for i in range(b - a)], np.int64)
    rows = np.repeat(np.arange(b - a, dtype=np.int64), counts)
    cols = p1.indices[cand].astype(np.int64)
    d1, d2 = p1.data[cand], p2.data[cand]
    num = d1.real + d2.real
    mq, ms = d1.imag, d2.imag
    q_ra, rest = _lead(mq)
    q_rb = _lead(np.where(rest > 0, rest, 1.0))[0]
    if len(long_rows):
        ok = cand[sub]
        at = np.searchsorted(np.flatnonzero(cand), sub[ok])  # their places among the candidates
        q_ra[at], q_rb[at] = long_ra[ok], long_rb[ok]
    del p1, p2, cand, d1, d2
    dq = _distance(qside, rows + a, q_ra, q_rb)
    # source side: window 0 from the product, further windows for long sources
    s_ra, rest = _lead(ms)
    s_rb = np.where(rest > 0, _lead(np.where(rest > 0, rest, 1.0))[0], -1)
    sub = np.flatnonzero(sside.long[cols])
    if len(sub):
        qb = _query_block(qside, a, b, n_voc, np.ones(e1 - e0))
        extra = [qb @ s_win for s_win in st["S_win"]]
        masks = _window_masks(rows[sub], cols[sub], n_src, ms[sub], extra)
        s_ra[sub], s_rb[sub], _ = _first_two(masks)
    ds = _distance(sside, cols, s_ra, s_rb)
    ratio = num / (dq + ds).astype(np.float64)
    return _select(rows, cols, ratio, b - a, k)


def _select(rows, cols, ratio, n_rows: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row the k best by (ln ratio desc, column asc), ``math.log`` computed for the few that can make it.

    Two ratios whose logarithms are the same double differ by < 1e-12 relative, so every candidate
    within that margin of the k-th ratio is kept before the logarithms decide."""
    idx = np.full((n_rows, k), -1, np.int32)
    val = np.full((n_rows, k), np.nan, np.float32)
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=ptr[1:])
    for i in range(n_rows):
        lo, hi = ptr[i], ptr[i + 1]
        if lo == hi:
            continue
        x, d = ratio[lo:hi], cols[lo:hi]
        if hi - lo > k:
            kth = np.partition(x, hi - lo - k)[hi - lo - k]
            keep = x >= kth * (1.0 - 1e-12)
            x, d = x[keep], d[keep]
        scores = np.array([math.log(v) for v in x.tolist()])
        order = np.lexsort((d, -scores))[:k]
        idx[i, : len(order)] = d[order]
        val[i, : len(order)] = scores[order]
    return idx, val
