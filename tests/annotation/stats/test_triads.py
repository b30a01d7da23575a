"""Circular triads: hand cases, Kendall formula vs brute force, planted cycles, ties, empty input."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.stats import (
    Judgements,
    count_circular_triads,
    kendall_triads,
    list_circular_triads,
    majority_triads,
    simulate_judgements,
    tournament_from_counts,
    triads_per_annotator,
)


def brute_force_cycles(adj):
    out = set()
    n = adj.shape[0]
    for i, j, k in combinations(range(n), 3):
        if adj[i, j] and adj[j, k] and adj[k, i]:
            out.add((i, j, k))
        elif adj[i, k] and adj[k, j] and adj[j, i]:
            out.add((i, k, j))
    return out


def random_tournament(n, rng):
    upper = np.triu(rng.random((n, n)) < 0.5, 1)
    lower = np.triu(~upper, 1).T
    return upper | lower


def test_three_items_cycle_and_transitive():
    cyc = np.zeros((3, 3), bool)
    cyc[0, 1] = cyc[1, 2] = cyc[2, 0] = True  # 0→1→2→0: pattern [1 1 1]
    tc = count_circular_triads(cyc)
    assert (tc.n_circular, tc.n_complete_triples, tc.expected_random) == (1, 1, 0.25)
    assert list_circular_triads(cyc).tolist() == [[0, 1, 2]]
    kt = kendall_triads(cyc.sum(1))
    assert (kt.d, kt.d_max, kt.zeta) == (1, 1, 0.0)

    tra = np.zeros((3, 3), bool)
    tra[0, 1] = tra[0, 2] = tra[1, 2] = True  # pattern [2 1 0]
    assert count_circular_triads(tra).n_circular == 0
    assert len(list_circular_triads(tra)) == 0
    assert kendall_triads(tra.sum(1)).zeta == 1.0


def test_reverse_orientation_listed_from_smallest_index():
    adj = np.zeros((3, 3), bool)
    adj[0, 2] = adj[2, 1] = adj[1, 0] = True  # 0→2→1→0
    assert list_circular_triads(adj).tolist() == [[0, 2, 1]]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 12), seed=st.integers(0, 10_000))
def test_kendall_formula_matches_brute_force(n, seed):
    adj = random_tournament(n, np.random.default_rng(seed))
    brute = brute_force_cycles(adj)
    assert kendall_triads(adj.sum(1)).d == len(brute)
    assert count_circular_triads(adj).n_circular == len(brute)
    listed = {tuple(r) for r in list_circular_triads(adj, cap=None).tolist()}
    assert listed == brute


def test_kendall_constants_n99_and_even_n():
    # notes: n = 99 → d_max 40,425, random expectation C(99,3)/4 = 39,212.25
    transitive = np.arange(99)[::-1]
    kt = kendall_triads(transitive)
    assert (kt.d, kt.d_max, kt.zeta, kt.expected_random) == (0, 40425, 1.0, 39212.25)
    # even n: d_max = (n³ − 4n)/24; n = 4 → 2 (regular-as-possible tournament 2,2,1,1)
    kt4 = kendall_triads([2, 2, 1, 1])
    assert kt4.d_max == 2 and kt4.d == 2 and kt4.zeta == 0.0


def test_kendall_rejects_incomplete():
    with pytest.raises(ValueError):
        kendall_triads([1, 0, 0])


def test_planted_cycles_found_per_annotator():
    n = 10
    theta = np.linspace(3, -3, n)  # item 0 strongest
    j = simulate_judgements(theta, None, n_annotators=1, annotator_noise=1e-6, seed=0)
    assert triads_per_annotator(j)[0]["n_circular"] == 0
    # plant: flip 0–9 (9 now beats 0) → cycles 0→k→9→0 for every k in 1..8
    flip = (j.a == 0) & (j.b == 9)
    w = j.winner_is_b.copy()
    w[flip] = 1 - w[flip]
    j2 = Judgements(j.annotator, j.a, j.b, w, n)
    row = triads_per_annotator(j2, list_cap=100)[0]
    assert row["n_circular"] == 8 and row["complete"]
    assert {tuple(t) for t in row["triads"].tolist()} == {(0, k, 9) for k in range(1, 9)}
    assert row["zeta"] == pytest.approx(1 - 8 / kendall_triads(np.arange(n)).d_max)
    assert row["expected_random"] == 120 / 4


def test_incomplete_tournament_counts_only_complete_triples():
    # pairs (0,1), (1,2), (0,2) judged, (0,3) judged only: one complete triple
    j = Judgements(annotator=[0, 0, 0, 0], a=[0, 1, 0, 0], b=[1, 2, 2, 3], winner_is_b=[0, 0, 1, 1], n_items=4)
    row = triads_per_annotator(j, list_cap=10)[0]
    assert row["n_complete_triples"] == 1 and row["n_circular"] == 1
    assert not row["complete"] and row["zeta"] is None
    assert row["triads"].tolist() == [[0, 1, 2]]


def test_retest_split_is_a_tie_and_majority_ties_excluded():
    # annotator 0 judges (0,1) twice with different answers → tie; (1,2),(0,2) once each
    j = Judgements(annotator=[0, 0, 0, 0], a=[0, 0, 1, 0], b=[1, 1, 2, 2], winner_is_b=[0, 1, 0, 1], n_items=3)
    row = triads_per_annotator(j)[0]
    assert row["n_tied_pairs"] == 1 and row["n_complete_triples"] == 0 and np.isnan(row["share"])
    # pooled majority: 2–1 decides, 1–1 is a tie
    j2 = Judgements(annotator=[0, 1, 2, 0, 1, 0, 1], a=[0, 0, 0, 1, 1, 0, 0], b=[1, 1, 1, 2, 2, 2, 2],
                    winner_is_b=[0, 0, 1, 0, 0, 1, 0], n_items=3)
    m = majority_triads(j2)[0]
    assert m["n_tied_pairs"] == 1 and m["n_decided_pairs"] == 2 and m["n_circular"] == 0
    adj, tied = tournament_from_counts(j2.count_matrix())
    assert tied == 1 and adj[0, 1] and adj[1, 2]


def test_per_batch_and_empty():
    theta = np.random.default_rng(1).normal(0, 1, (3, 8))
    j = simulate_judgements(theta, None, n_annotators=2, annotators_per_pair=None, annotator_noise=[0.1, 5.0], seed=3)
    rows = triads_per_annotator(j)
    assert [(r["batch"], r["annotator"]) for r in rows] == [(b, a) for b in range(3) for a in range(2)]
    for r in rows:
        assert r["complete"] and r["n_complete_triples"] == 56
    assert len(majority_triads(j)) == 3
    empty = Judgements([], [], [], [], 5)
    assert triads_per_annotator(empty) == [] and majority_triads(empty) == []
    tc = count_circular_triads(np.zeros((2, 2), bool))
    assert tc.n_circular == 0 and np.isnan(tc.share)


def test_noise_increases_circular_share():
    theta = np.random.default_rng(0).normal(0, 1.5, 40)
    j = simulate_judgements(theta, None, n_annotators=3, annotators_per_pair=None,
                            annotator_noise=[0.2, 1.0, 5.0], seed=4)
    shares = [r["share"] for r in triads_per_annotator(j)]
    assert shares[0] < shares[1] < shares[2] < 0.3  # random choice → 0.25
