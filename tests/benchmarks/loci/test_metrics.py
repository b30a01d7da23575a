"""Metrics against hand-computed cases (ties, queries without gold, empty predictions) and brute force."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.loci import metrics as M
from core.numeric import spearman

# 3 queries x 6 sources. q0: gold s1 (cit.), s4 (cf.); q1: gold s2 (cit.); q2: no gold.
GQ = np.array([0, 0, 1])
GS = np.array([1, 4, 2])
GC = np.array([1, 2, 1], np.int8)
IDX = np.array([[3, 1, 0, 4],     # q0: s1 at rank 2, s4 at rank 4
                [2, -1, -1, -1],  # q1: found at rank 1, nothing else retrieved
                [-1, -1, -1, -1]])  # q2: empty prediction


def test_retrieved_classes_and_counts():
    hits = M.retrieved_gold_classes(IDX, GQ, GS, GC, 6)
    assert hits.tolist() == [[0, 1, 0, 2], [1, 0, 0, 0], [0, 0, 0, 0]]
    c = M.gold_counts(GQ, GC, 3)
    assert c["all"].tolist() == [2, 1, 0] and c["cit."].tolist() == [1, 1, 0] and c["cf."].tolist() == [1, 0, 0]


def test_recall_and_mrr_hand_computed():
    hits = M.retrieved_gold_classes(IDX, GQ, GS, GC, 6)
    c = M.gold_counts(GQ, GC, 3)
    r1 = M.recall_at_k(hits, c["all"], 1)
    assert r1[0] == 0.0 and r1[1] == 1.0 and math.isnan(r1[2])  # no gold -> undefined, not 0
    r2 = M.recall_at_k(hits, c["all"], 2)
    assert r2[0] == 0.5
    assert M.recall_at_k(hits, c["all"], 4)[0] == 1.0
    assert M.recall_at_k(hits, c["all"], 1000)[0] == 1.0  # k beyond the depth counts what was retrieved
    assert M.recall_at_k(hits, c["cf."], 3, "cf.")[0] == 0.0 and M.recall_at_k(hits, c["cf."], 4, "cf.")[0] == 1.0
    assert math.isnan(M.recall_at_k(hits, c["cf."], 4, "cf.")[1])
    mrr = M.mrr_at_k(hits, c["all"], 10)
    assert mrr[0] == 0.5 and mrr[1] == 1.0 and math.isnan(mrr[2])
    assert M.mrr_at_k(hits, c["all"], 1)[0] == 0.0
    assert M.mrr_at_k(hits, c["cf."], 10, "cf.")[0] == 0.25
    assert M.macro(M.recall_at_k(hits, c["all"], 2)) == (0.75, 2)


def test_ties_pessimistic_and_optimistic():
    idx = np.array([[0, 1, 2, 3]])
    sc = np.array([[0.9, 0.5, 0.5, 0.5]])  # gold s3 tied with s1, s2 at ranks 2..4
    gq, gs, gc = np.array([0]), np.array([3]), np.array([1], np.int8)
    n = np.array([1])
    as_ranked = M.retrieved_gold_classes(idx, gq, gs, gc, 4, scores=sc)
    pess = M.retrieved_gold_classes(idx, gq, gs, gc, 4, scores=sc, ties="pessimistic")
    opt = M.retrieved_gold_classes(idx, gq, gs, gc, 4, scores=sc, ties="optimistic")
    assert M.mrr_at_k(as_ranked, n, 10)[0] == 0.25
    assert M.mrr_at_k(pess, n, 10)[0] == 0.25
    assert M.mrr_at_k(opt, n, 10)[0] == 0.5
    assert M.recall_at_k(opt, n, 2)[0] == 1.0 and M.recall_at_k(pess, n, 2)[0] == 0.0


def test_gold_ranks():
    r = M.gold_ranks(IDX, GQ, GS, 6)
    assert r.tolist() == [2, 4, 1]
    assert M.gold_ranks(IDX, [2], [0], 6).tolist() == [0]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 8), st.integers(0, 10_000))
def test_vectorised_recall_equals_loop(nq, ns, seed):
    rng = np.random.default_rng(seed)
    depth = ns
    idx = np.stack([rng.permutation(ns) for _ in range(nq)])
    cut = rng.integers(0, ns + 1, nq)
    for i in range(nq):
        idx[i, cut[i]:] = -1
    gold = {(q, s): int(rng.integers(1, 3)) for q in range(nq) for s in range(ns) if rng.random() < 0.3}
    gq = np.array([k[0] for k in gold], int)
    gs = np.array([k[1] for k in gold], int)
    gc = np.array(list(gold.values()), np.int8)
    hits = M.retrieved_gold_classes(idx, gq, gs, gc, ns)
    counts = M.gold_counts(gq, gc, nq)
    for k in (1, 2, depth):
        rec = M.recall_at_k(hits, counts["all"], k)
        mrr = M.mrr_at_k(hits, counts["all"], k)
        for q in range(nq):
            rel = {s for (qq, s) in gold if qq == q}
            top = [s for s in idx[q, :k] if s >= 0]
            if not rel:
                assert math.isnan(rec[q]) and math.isnan(mrr[q])
                continue
            assert rec[q] == pytest.approx(len(rel & set(top)) / len(rel))
            first = next((i + 1 for i, s in enumerate(top) if s in rel), None)
            assert mrr[q] == pytest.approx(1 / first if first else 0.0)


def test_per_query_prf_conventions():
    gold = np.array([[1, 0, 2], [0, 0, 0], [0, 0, 0], [1, 0, 0]])
    pred = np.array([[1, 1, 0], [0, 0, 0], [2, 0, 0], [0, 0, 0]])
    a = M.per_query_prf(pred, gold, "all")
    assert a["tp"].tolist() == [1, 0, 0, 0] and a["fp"].tolist() == [1, 0, 1, 0] and a["fn"].tolist() == [1, 0, 0, 1]
    assert a["p"].tolist() == [0.5, 1.0, 0.0, 0.0]  # q1 empty/empty = 1, q3 gold but nothing predicted = 0
    assert a["r"].tolist() == [0.5, 1.0, 0.0, 0.0]
    assert a["f1"].tolist() == [0.5, 1.0, 0.0, 0.0]
    s = M.prf_summary(a)
    assert s["macro_gold"]["f1"] == pytest.approx(0.25) and s["macro_gold"]["n_queries"] == 2
    assert s["macro_all"]["f1"] == pytest.approx(1.5 / 4)
    assert s["pooled"]["p"] == pytest.approx(1 / 3) and s["pooled"]["r"] == pytest.approx(1 / 3)
    cit = M.per_query_prf(pred, gold, "cit.")
    assert cit["tp"].tolist() == [1, 0, 0, 0] and cit["fp"].tolist() == [1, 0, 0, 0]
    cf = M.per_query_prf(pred, gold, "cf.")
    assert cf["fn"].tolist() == [1, 0, 0, 0] and cf["fp"].tolist() == [0, 0, 1, 0]


def test_all_view_counts_type_confusion_as_found():
    gold = np.array([[1, 0]])
    pred = np.array([[2, 0]])
    assert M.per_query_prf(pred, gold, "all")["tp"].tolist() == [1]
    assert M.per_query_prf(pred, gold, "cit.")["fn"].tolist() == [1]


def test_confusion_matrix():
    gold = np.array([[1, 0, 2], [0, 0, 1]])
    pred = np.array([[1, 2, 0], [0, 0, 2]])
    cm = M.confusion_matrix(pred, gold)
    assert cm.tolist() == [[2, 0, 1], [0, 1, 1], [1, 0, 0]]


def test_error_rates_global_vs_per_query():
    # full grid: equal; varying N_q: differ; gold-only mean drops the distractor's false positives
    fp = np.array([2, 0, 6])
    fn = np.array([1, 1, 0])
    e = M.error_rates(fp, fn, 10, query_mask=np.array([True, True, False]))
    assert e["global"]["fpr"] == pytest.approx(8 / 30) and e["per_query_all"]["fpr"] == pytest.approx(8 / 30)
    assert e["global"]["smr"] == pytest.approx(10 / 30) and e["global"]["fnr"] == pytest.approx(2 / 30)
    assert e["per_query_gold"]["fpr"] == pytest.approx(0.1) and e["per_query_gold"]["smr"] == pytest.approx(0.2)
    e2 = M.error_rates(np.array([1, 1]), np.array([0, 0]), np.array([2, 100]))
    assert e2["global"]["fpr"] == pytest.approx(2 / 102)
    assert e2["per_query_all"]["fpr"] == pytest.approx((0.5 + 0.01) / 2)


def test_plateau_threshold_picks_largest_within_tolerance():
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    y = np.array([1, 1, 0, 1, 0, 0])
    thr, f1 = M.f1_curve(s, y)
    assert thr.tolist() == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    assert f1 == pytest.approx([0.5, 0.8, 2 * 2 / 6, 2 * 3 / 7, 0.75, 2 * 3 / 9])
    t = M.plateau_threshold(s, y, tol=0.01)
    assert t["threshold"] == 0.6 and t["best_f1"] == pytest.approx(6 / 7)
    t = M.plateau_threshold(s, y, tol=0.1)  # 0.8 is within 0.1 of 0.857 -> the larger threshold wins
    assert t["threshold"] == 0.8
    assert M.plateau_threshold(s, np.zeros(6))["threshold"] == math.inf


def test_f1_curve_with_tied_scores():
    thr, f1 = M.f1_curve(np.array([0.5, 0.5, 0.2]), np.array([1, 0, 1]))
    assert thr.tolist() == [0.5, 0.2] and f1 == pytest.approx([0.5, 0.8])


def test_decide():
    p = np.array([[0.1, 0.8, 0.7], [0.5, 0.3, 0.6], [0.9, 0.05, 0.05], [0.0, 0.5, 0.5]])
    d = M.decide(p, {"cit.": 0.5, "cf.": 0.5})
    assert d.tolist() == [1, 2, 0, 1]
    assert M.decide(np.array([0.2, 0.7]), {"all": 0.5}).tolist() == [0, 3]


def test_depth_sweep_matches_brute_force():
    rng = np.random.default_rng(3)
    nq, ns = 7, 9
    idx = np.stack([rng.permutation(ns) for _ in range(nq)])
    idx[2, 5:] = -1
    gold = np.zeros((nq, ns), np.int8)
    gold[rng.random((nq, ns)) < 0.15] = 1
    gold[0, 0] = 2
    gq, gs = np.nonzero(gold)
    gc = gold[gq, gs]
    rer = np.where(rng.random((nq, ns)) < 0.4, rng.integers(1, 3, (nq, ns)), 0).astype(np.int8)
    rows = M.depth_sweep(idx, gq, gs, gc, ns, ks=(1, 3, 9, 20), rerank_pred=rer)
    for row in rows:
        k = row["k"]
        retrieved = np.zeros((nq, ns), bool)
        for q in range(nq):
            for s in idx[q, :k]:
                if s >= 0:
                    retrieved[q, s] = True
        g = gold > 0
        assert row["ret"]["tp"] == (retrieved & g).sum()
        assert row["ret"]["fp"] == (retrieved & ~g).sum()
        assert row["ret"]["fn"] == (~retrieved & g).sum()
        assert row["ret"]["inspect"] == retrieved.sum()
        kept = retrieved & (rer > 0)
        assert row["rer"]["tp"] == (kept & g).sum() and row["rer"]["fp"] == (kept & ~g).sum()
        assert row["rer"]["fpr"] == pytest.approx((kept & ~g).sum() / (nq * ns))
        assert row["rer"]["smr"] == pytest.approx(((kept & ~g).sum() + (~kept & g).sum()) / (nq * ns))
    cit_rows = M.depth_sweep(idx, gq, gs, gc, ns, ks=(9,), rerank_pred=rer, view="cit.")
    kept = (rer == 1) & (idx >= -1).all()
    full = np.zeros((nq, ns), bool)
    for q in range(nq):
        full[q, idx[q][idx[q] >= 0]] = True
    assert cit_rows[0]["rer"]["tp"] == (full & (rer == 1) & (gold == 1)).sum()


def test_mean_std_and_spearman():
    d = M.mean_std([0.5, float("nan"), 0.7])
    assert d["mean"] == pytest.approx(0.6) and d["std"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert d["folds"][1] is None
    assert spearman([1, 2, 3, 4], [1, 2, 3, 5]).as_dict()["rho"] == pytest.approx(1.0)
    assert spearman([1, 1, 1], [0, 1, 0]).as_dict() == {"rho": None, "p": None, "n": 3}
