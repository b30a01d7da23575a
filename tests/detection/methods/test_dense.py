"""Exact dense top-k in bounded blocks, faiss parity, and the memory estimate that refuses or switches."""
import numpy as np
import pytest

from detection.methods.semantic import dense


def _brute(Q, S, k):
    s = Q @ S.T
    idx = np.lexsort((np.broadcast_to(np.arange(S.shape[0]), s.shape), -s), axis=1)[:, :k]
    return idx, np.take_along_axis(s, idx, 1)


def test_blocked_search_equals_brute_force():
    rng = np.random.default_rng(1)
    Q, S = rng.normal(size=(37, 12)).astype(np.float32), rng.normal(size=(500, 12)).astype(np.float32)
    seen = []
    idx, val = dense.exact_topk(Q, S, 10, block_rows=8, progress=lambda f, m: seen.append(f))
    bi, bv = _brute(Q, S, 10)
    np.testing.assert_array_equal(idx, bi)
    np.testing.assert_allclose(val, bv, rtol=1e-5)
    assert len(seen) == 5 and seen[-1] == 1.0
    ci, cv = dense.exact_topk(Q, S, 10, block_rows=5, chunk_cols=64)  # 8 source chunks merged
    np.testing.assert_array_equal(ci, bi)
    np.testing.assert_allclose(cv, bv, rtol=1e-5)


def test_k_beyond_the_corpus_is_padded():
    idx, val = dense.exact_topk(np.eye(2, 3, dtype=np.float32), np.eye(3, dtype=np.float32), 5)
    assert idx[0].tolist()[:3] == [0, 1, 2] and idx[0, 3:].tolist() == [-1, -1] and np.isnan(val[0, 4])


def test_faiss_flat_ip_matches_numpy():
    pytest.importorskip("faiss")
    rng = np.random.default_rng(2)
    Q, S = rng.normal(size=(20, 16)).astype(np.float32), rng.normal(size=(300, 16)).astype(np.float32)
    a, av = dense.exact_topk(Q, S, 7)
    b, bv = dense.faiss_topk(Q, S, 7)
    np.testing.assert_allclose(av, bv, rtol=1e-4)
    assert (a == b).mean() > 0.99


def test_plan_refuses_what_does_not_fit_and_bounds_the_block():
    plan = dense.plan_search(1000, 100_000, 384, 100, backend="numpy", max_block_bytes=64 * 2**20,
                             memory=8 * 2**30)
    assert plan.backend == "numpy" and plan.block_rows * 16_384 * 4 <= 64 * 2**20
    with pytest.raises(dense.SearchTooLarge, match="needs about .* GiB, 0.5 GiB available"):
        dense.plan_search(1000, 2_000_000, 384, 100, backend="numpy", memory=2**29)


def test_auto_switches_to_faiss_when_numpy_would_not_fit():
    pytest.importorskip("faiss")
    plan = dense.plan_search(1000, 2_000_000, 384, 100, backend="auto", memory=4 * 2**30)
    assert plan.backend == "faiss" and "using faiss IndexFlatIP" in plan.note


def test_torch_blocks_match_numpy():
    rng = np.random.default_rng(3)
    Q, S = rng.normal(size=(9, 8)).astype(np.float32), rng.normal(size=(120, 8)).astype(np.float32)
    a, av = dense.exact_topk(Q, S, 5)
    b, bv = dense.torch_topk(Q, S, 5, block_rows=4)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(av, bv, rtol=1e-5)


def test_faiss_is_the_default_and_keeps_the_numpy_order_at_ties():
    """Repeated source vectors (a verse repeated in a poem) and a query with no known word (all scores 0) tie;
    faiss's lists come in the numpy path's order: score descending, the lower source index kept at a tie."""
    pytest.importorskip("faiss")
    rng = np.random.default_rng(4)
    base = rng.normal(size=(40, 16)).astype(np.float32)
    S = np.concatenate([base, base[::-1], base[:10]])  # every vector two or three times
    Q = np.concatenate([rng.normal(size=(12, 16)).astype(np.float32), np.zeros((1, 16), np.float32)])
    assert dense.plan_search(len(Q), len(S), 16, 5).backend == "faiss"
    for k in (1, 5, 7, 90, 200):
        a, av = dense.exact_topk(Q, S, k)
        b, bv = dense.search(Q, S, k)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(av, bv, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert dense.search(Q, S, 3)[0][-1].tolist() == [0, 1, 2]  # all tied at 0: the lowest indices
