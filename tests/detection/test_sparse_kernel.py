"""The sparse scoring kernel (detection/methods/lexical/sparse_kernel.py) gives the lists the scipy path gave.

Checked against scipy's product with a per-row (score desc, index asc) selection (``reference_topk``, the code the
project ran before the kernel), against brute force on constructed matrices full of ties and zero weights, against
bm25s on real Latin (Lucan -> Virgil lines, Loci Similes prose), and through the multi-channel retriever against
its former scipy channel scoring. Pure: no database.
"""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from detection.channels.pairwise import MultiChannelRetriever
from detection.methods import get_retriever
from detection.methods.infrastructure.topk import topk_exact
from detection.methods.lexical import sparse_kernel as K

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TESS = DATA / "latin_texts" / "tesserae"


def _brute(Q, W, k, min_shared=1):
    """Top-k by sorting the dense float32 score rows (scipy's product) by (score desc, index asc)."""
    S = (Q @ W).toarray().astype(np.float32)
    if min_shared > 1:
        Qb, Wb = Q.copy(), W.copy()
        Qb.data[:] = 1
        Wb.data[:] = 1
        S[(Qb @ Wb).toarray() < min_shared] = 0
    idx = np.full((S.shape[0], k), -1, np.int32)
    val = np.full((S.shape[0], k), np.nan, np.float32)
    for i, row in enumerate(S):
        order = np.lexsort((np.arange(row.size), -row))
        order = order[row[order] > 0][:k]
        idx[i, :order.size], val[i, :order.size] = order, row[order]
    return idx, val, S


def _tied_matrices(seed, nq=60, nt=40, nd=3000, density=0.3):
    """Small-integer weights (many exact ties), some zero weights, an empty query row, repeated documents."""
    rng = np.random.default_rng(seed)
    W = sp.random(nt, nd, density=density, format="csr", random_state=rng, dtype=np.float32)
    W.data = rng.integers(0, 4, W.data.size).astype(np.float32)  # zeros stored explicitly
    Q = sp.random(nq, nt, density=0.2, format="csr", random_state=rng, dtype=np.float32)
    Q.data = rng.integers(1, 3, Q.data.size).astype(np.float32)
    Q = Q.tolil()
    Q[3, :] = 0
    return Q.tocsr(), W


@pytest.mark.parametrize("k", [1, 7, 100, 2500, 4000])
def test_topk_equals_brute_force_and_scipy_path_at_ties(k):
    for seed in range(3):
        Q, W = _tied_matrices(seed)
        idx, val = K.score_topk(Q, W, k)
        b_idx, b_val, S = _brute(Q, W, k)
        assert np.array_equal(idx, b_idx) and np.array_equal(val, b_val, equal_nan=True)
        r_idx, r_val = K.reference_topk(Q, W, k)
        assert np.array_equal(idx, r_idx) and np.array_equal(val, r_val, equal_nan=True)
        assert (idx[3] == -1).all()  # the empty query
        # documents tie at the last score kept in most rows, and a shorter list is the head of a longer one
        last = [(i, row[~np.isnan(row)][-1]) for i, row in enumerate(val) if not np.isnan(row[0])]
        assert sum((S[i] == v).sum() > 1 for i, v in last) >= 10
        short, _ = K.score_topk(Q, W, max(1, k // 3))
        assert np.array_equal(short, idx[:, :short.shape[1]])


@pytest.mark.parametrize("k", [1, 50, 3000])
def test_min_shared_and_dense_block(k):
    Q, W = _tied_matrices(7, density=0.5)
    for min_shared in (1, 2, 3):
        b_idx, b_val, S = _brute(Q, W, k, min_shared)
        idx, val = K.score_topk(Q, W, k, min_shared=min_shared)
        assert np.array_equal(idx, b_idx) and np.array_equal(val, b_val, equal_nan=True)
        dense, d_idx, d_val = K.score_block_dense(Q, W, k, min_shared=min_shared)
        assert np.array_equal(dense, S)  # bit for bit the scipy product
        assert np.array_equal(d_idx, b_idx) and np.array_equal(d_val, b_val, equal_nan=True)
        # the multi-channel retriever's former selection on the dense block
        e_idx, _ = topk_exact(S, k, floor=0.0)
        assert np.array_equal(d_idx, e_idx)


def test_unsorted_query_entries_sum_in_scipys_order():
    """Entries stored out of column order (as the channel feature matrices are) sum in stored order, like scipy."""
    rng = np.random.default_rng(3)
    W = sp.random(30, 500, density=0.4, format="csr", random_state=rng, dtype=np.float32)
    rows = [rng.permutation(30)[:12] for _ in range(20)]
    indptr = np.arange(0, 12 * 21, 12)
    Q = sp.csr_matrix((rng.random(240).astype(np.float32) * 3, np.concatenate(rows), indptr), shape=(20, 30))
    assert not Q.has_sorted_indices
    dense, idx, val = K.score_block_dense(Q, W, 40)
    assert np.array_equal(dense, (Q @ W).toarray())
    assert np.array_equal(idx, K.reference_topk(Q, W, 40)[0])


def test_bad_input_is_refused():
    Q, W = _tied_matrices(1)
    with pytest.raises(ValueError, match="columns"):
        K.score_topk(Q[:, :10], W, 5)
    with pytest.raises(ValueError, match="k must be"):
        K.score_topk(Q, W, 0)
    neg = W.copy()
    neg.data[0] = -1
    with pytest.raises(ValueError, match="non-negative"):
        K.score_topk(Q, neg, 5)
    with pytest.raises(TypeError):
        K.score_topk(Q.toarray(), W, 5)


def test_compiled_functions_are_cached_on_disk():
    K.warm_up()
    for fn in (K._score_rows, K._select, K._keep_best):
        assert fn._cache.__class__.__name__ != "NullCache"  # cache=True: compiled once per machine


# ------------------------------------------------------------------------------------------------ real Latin
def _tess_lines(stem, books=None, limit=None):
    from detection.latin.readers import ReadReport, read_tess

    path = TESS / f"{stem}.tess"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    units = [u for u in read_tess(path, report=ReadReport()) if books is None or int(u.ref.split(".")[0]) in books]
    return [u.text for u in units][:limit]


def _loci_texts():
    import csv

    path = DATA / "locisimiles" / "pairs_545_with_text.csv"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    queries = sorted({r["text_query"] for r in rows})
    sources = sorted({r["text_corpus"] for r in rows})
    for stem in ("cicero.de_officiis", "cicero.de_amicitia", "vergil.aeneid"):
        sources += _tess_lines(stem, limit=3000)
    return queries, sources


@pytest.fixture(scope="module", params=["lucan-virgil", "loci"])
def real(request):
    if request.param == "lucan-virgil":
        queries, sources = _tess_lines("lucan.bellum_civile", books={2}), _tess_lines("vergil.aeneid")
    else:
        queries, sources = _loci_texts()
    r = get_retriever("bm25-lemma").fit([f"s{i}" for i in range(len(sources))], sources)
    return r, queries, sources


@pytest.mark.parametrize("k", [100, 1000])
def test_bm25_on_real_latin_equals_scipy_path(real, k):
    r, queries, _ = real
    res = r.search(queries, k)
    ref_idx, ref_val = K.reference_topk(r.query_matrix(queries), r.W, k)
    assert np.array_equal(res.indices, ref_idx)
    assert np.allclose(res.scores, ref_val, rtol=0, atol=1e-6, equal_nan=True)
    if k == 100:  # some lists are full, so the cut-off is tested (at 1000, lines touch fewer sources)
        assert np.isfinite(res.scores[:, -1]).any()


def test_bm25_on_real_latin_equals_bm25s_with_ties(real):
    """Per query: our scores are bm25s's scores of the same documents (1e-6 of the query's best score), every
    document left out scores at most our k-th score in bm25s (or 0 when our list is not full), and at a tie the
    lower index was kept."""
    bm25s = pytest.importorskip("bm25s")
    r, queries, sources = real
    k = 100
    res = r.search(queries, k)
    m = bm25s.BM25(k1=r.k1, b=r.b, method="lucene")
    m.index(r.analyzer(sources), show_progress=False)  # the same analysed terms (lemmas, stoplist)
    vocab = m.vocab_dict
    tied_queries = 0
    for i, terms in enumerate(r.analyzer(queries)):
        ids = [vocab[t] for t in terms if t in vocab]
        theirs = m.get_scores_from_ids(ids) if ids else np.zeros(len(r.source_ids), np.float32)
        row = res.indices[i][res.indices[i] >= 0]
        ours = res.scores[i][: row.size]
        tol = 1e-6 * max(1.0, float(theirs.max()))
        assert np.allclose(ours, theirs[row], rtol=0, atol=tol)
        rest = np.ones(theirs.size, bool)
        rest[row] = False
        if row.size == k:
            assert theirs[rest].max(initial=0) <= ours[-1] + tol
            tied = np.flatnonzero(rest & (np.abs(theirs - ours[-1]) <= tol))
            if tied.size:
                tied_queries += 1
                at_cut = row[np.abs(ours - ours[-1]) <= tol]
                assert tied.min() > at_cut.max()  # the kept ties have the lower indices
        else:
            assert theirs[rest].max(initial=0) <= tol
    assert tied_queries > 0  # real lists do tie at the cut-off


# ------------------------------------------------------------------------------------------------ channels
class _ScipyChannels(MultiChannelRetriever):
    """The multi-channel retriever with its channel scoring as it was before the kernel (scipy product, dense
    lemma-count product, dense top-k selection)."""

    def _channel_block(self, ch, qmat, qdense, a, b, quota=1):
        if ch in qdense:
            return super()._channel_block(ch, qmat, qdense, a, b, quota)
        Q = qmat[ch][a:b]
        block = (Q @ self._smat[ch]).toarray().astype(np.float32)
        if ch == "lemma":
            Qb, Sb = Q.copy(), self._smat[ch].copy()
            Qb.data[:] = 1.0
            Sb.data[:] = 1.0
            block[(Qb @ Sb).toarray() < 2] = 0.0
        return block, topk_exact(block, quota, floor=0.0)[0]


def test_channels_lists_equal_the_scipy_scoring():
    queries = _tess_lines("lucan.bellum_civile", books={2}, limit=120)
    sources = _tess_lines("vergil.aeneid", limit=4000)
    ids = [f"s{i}" for i in range(len(sources))]
    params = dict(vectors=None, synonyms=None, semantic=False, synonym=False, budget=200)
    new = MultiChannelRetriever(**params).fit(ids, sources)
    old = _ScipyChannels(**params).fit(ids, sources)
    a, ch_a, _ = new.search_explained(queries, 50)
    b, ch_b, _ = old.search_explained(queries, 50)
    assert np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert np.array_equal(ch_a, ch_b)
    assert (a.indices[:, 0] >= 0).all()


@pytest.mark.parametrize("k", [1, 5, 100, 700, 5000])
def test_dense_block_selection_equals_topk_exact(k):
    """The multi-channel retriever's dense selections (candidates, the semantic channel): the same lists as
    ``topk_exact(..., floor=0.0)``, on blocks full of ties, zeros and negative entries."""
    rng = np.random.default_rng(k)
    block = rng.integers(-2, 6, size=(40, 3000)).astype(np.float32) / 4
    block[3] = 0.0
    block[5, :7] = 1e6 + rng.integers(0, 3, 7)
    block[6] = rng.random(3000).astype(np.float32)
    got = K.topk_positive(block, k)
    want = topk_exact(block, k, floor=0.0)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1], equal_nan=True)
    assert (got[0][3] == -1).all() and (got[0][6, :min(k, 3000)] >= 0).all()
