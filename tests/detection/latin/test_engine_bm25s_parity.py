"""Our sparse BM25 computes the same scores as bm25s (method "lucene") on the same analysed terms.

Terms are fed as whitespace-separated tokens (the analyser is replaced by ``str.split``), so the test checks the
scoring only: idf variant, length normalisation (avgdl over all documents, empty ones included), repeated query
terms (counted per occurrence by both), out-of-vocabulary and empty queries, and ties.
"""
import math

import numpy as np
import pytest

bm25s = pytest.importorskip("bm25s")

from detection.methods.lexical.sparse import BM25Retriever  # noqa: E402

DOCS = [
    "a b c",
    "",  # empty document: length 0, counts in avgdl
    "a a d",
    "b c",
    "e",
    "a b c",  # duplicate of doc 0: exact tie
    "d d d d b",
    "c b",  # same bag of terms as doc 3: exact tie
    "",
    "f g h a",
]
QUERIES = [
    "a",
    "a a",  # repeated term: twice the single-term score
    "b a b",
    "zz",  # out of vocabulary only
    "",  # empty query
    "d e zz",
    "c b",
    "h g f e d c b a a",
]


def _ours(k1, b):
    r = BM25Retriever(kind="surface", stopwords=False, k1=k1, b=b)
    r.analyzer = lambda texts, progress=None: [t.split() for t in texts]
    r.fit([f"s{i}" for i in range(len(DOCS))], DOCS)
    return r


def _theirs(k1, b):
    m = bm25s.BM25(k1=k1, b=b, method="lucene")
    m.index([d.split() for d in DOCS], show_progress=False)
    return m


def _their_scores(m, q):
    ids = [m.vocab_dict[t] for t in q.split() if t in m.vocab_dict]
    return m.get_scores_from_ids(ids) if ids else np.zeros(len(DOCS), dtype=np.float32)


def _formula(q, k1, b):
    """BM25 as documented in sparse.py, in plain Python (float64)."""
    docs = [d.split() for d in DOCS]
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    out = []
    for d in docs:
        s = 0.0
        for t in q.split():  # every occurrence of a query term
            df = sum(t in x for x in docs)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = d.count(t)
            if tf == 0:  # (with b = 1 an empty document would give 0/0)
                continue
            s += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return np.array(out)


@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (1.2, 0.5), (0.9, 1.0)])
def test_scores_match_bm25s_and_formula(k1, b):
    r, m = _ours(k1, b), _theirs(k1, b)
    dense = (r.query_matrix(QUERIES) @ r.W).toarray()
    for q, ours in zip(QUERIES, dense):
        theirs = _their_scores(m, q)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7, err_msg=q)
        np.testing.assert_allclose(ours, _formula(q, k1, b), rtol=1e-6, atol=1e-7, err_msg=q)
    i_a, i_aa = QUERIES.index("a"), QUERIES.index("a a")
    np.testing.assert_allclose(dense[i_aa], 2 * dense[i_a], rtol=1e-6)
    assert not dense[QUERIES.index("zz")].any() and not dense[QUERIES.index("")].any()
    assert not dense[:, 1].any() and not dense[:, 8].any()  # empty documents never score


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_topk_matches_bm25s_up_to_ties(k):
    r, m = _ours(1.5, 0.75), _theirs(1.5, 0.75)
    res = r.search(QUERIES, k)
    for i, q in enumerate(QUERIES):
        theirs = _their_scores(m, q)
        keep = res.indices[i] >= 0
        got_idx, got_val = res.indices[i][keep], res.scores[i][keep]
        # their top-k scores (positive only), as a sorted list: equal to ours whatever the tie order
        want_val = np.sort(theirs[theirs > 0])[::-1][:k]
        np.testing.assert_allclose(got_val, want_val, rtol=1e-6, err_msg=q)
        if len(got_val) == 0:
            continue
        tol = 1e-6 * max(1.0, float(want_val[0]))
        cut = float(want_val[-1]) if len(want_val) == k else -np.inf
        # every document strictly above the k-th score is in our list; the rest of the list is tied at the cut
        above = set(np.flatnonzero((theirs > cut + tol) & (theirs > 0)).tolist())
        assert above <= set(got_idx.tolist()), q
        assert all(abs(float(theirs[j]) - cut) <= tol for j in set(got_idx.tolist()) - above), q
        # bm25s's own top-k list agrees with ours above the cut
        docs, scores = m.retrieve([[t for t in q.split() if t in m.vocab_dict]], k=k, show_progress=False)
        their_above = {int(j) for j, s in zip(docs[0], scores[0]) if s > cut + tol and s > 0}
        assert their_above == above, q


def test_ties_are_real_ties():
    """The constructed ties (duplicate documents) get bit-identical scores."""
    r = _ours(1.5, 0.75)
    dense = (r.query_matrix(["a b c"]) @ r.W).toarray()[0]
    assert dense[0] == dense[5] and dense[3] == dense[7] and dense[0] > 0
