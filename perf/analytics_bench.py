"""Benchmark: full annotation analytics on realistic sizes, with named alternatives in the same run.

Scenarios
  A. 100 batches × 4,851 pairs (99 candidates) × 2 judgements by distinct annotators (11 in the pool),
     plus 3 % test–retest repeats  (~1.0 M judgements).
  B. one batch, 11 annotators, full overlap (53,361 judgements).

Alternatives measured in the same run
  - Bradley–Terry: choix ``ilsr_pairwise`` (list of (winner, loser) tuples) vs ``ilsr_pairwise_dense``
    (what ``annotation.stats`` uses).
  - Cohen's kappa matrix: scikit-learn ``cohen_kappa_score`` over all annotator pairs vs our matmul version.
  - Fleiss' kappa: statsmodels ``aggregate_raters`` + ``fleiss_kappa`` (scenario B, full overlap).
  - Krippendorff's alpha: the ``krippendorff`` package vs our coincidence-matrix version.
  - Circular triads: brute force over all C(99,3) triples (itertools) vs ``trace(A³)/3``.

Run:  .venv/bin/python perf/analytics_bench.py  [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats import (  # noqa: E402
    batch_scores,
    bootstrap_bradley_terry,
    bradley_terry_batches,
    cohen_kappa_matrix,
    count_circular_triads,
    fleiss_kappa_judgements,
    krippendorff_alpha_judgements,
    label_table,
    majority_triads,
    retest_agreement,
    simulate_judgements,
    split_half_reliability,
    triads_per_annotator,
)


def timed(label, fn, results):
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    results[label] = dt
    print(f"  {label:<44s} {dt * 1000:10.1f} ms", flush=True)
    return out


def full_analytics(j, results, n_splits=5, n_boot=200):
    timed("wins/normalised/win share (all batches)", lambda: batch_scores(j), results)
    timed("Bradley-Terry dense, alpha 0.01 (all batches)", lambda: bradley_terry_batches(j), results)
    timed("bootstrap BT, 1 batch", lambda: bootstrap_bradley_terry(j.count_matrix(0), n_boot=n_boot, seed=0), results)
    timed("label table (first judgement per unit)", lambda: label_table(j), results)
    timed("Cohen kappa matrix", lambda: cohen_kappa_matrix(j), results)
    timed("Fleiss kappa (per-item n)", lambda: fleiss_kappa_judgements(j), results)
    timed("Krippendorff alpha nominal", lambda: krippendorff_alpha_judgements(j), results)
    timed("test-retest per annotator", lambda: retest_agreement(j), results)
    timed("circular triads per annotator x batch", lambda: triads_per_annotator(j), results)
    timed("circular triads, pooled majority per batch", lambda: majority_triads(j), results)
    timed(f"split-half Spearman ({n_splits} splits)", lambda: split_half_reliability(j, n_splits=n_splits), results)


def peak_memory(fn):
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2 ** 20


def alternatives(j, results, n_bt_batches=3):
    import choix
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    n = j.n_items
    batches = sorted(j.batch_slices())[:n_bt_batches]
    t_list = t_dense = 0.0
    for bt in batches:
        sub = j.for_batch(bt)
        data = list(zip(sub.winner.tolist(), sub.loser.tolist()))
        c = sub.count_matrix()
        t0 = time.perf_counter()
        choix.ilsr_pairwise(n, data, alpha=0.01)
        t_list += time.perf_counter() - t0
        t0 = time.perf_counter()
        choix.ilsr_pairwise_dense(c, alpha=0.01)
        t_dense += time.perf_counter() - t0
    print(f"  BT per batch: ilsr_pairwise (list) {t_list / len(batches) * 1000:.1f} ms, "
          f"ilsr_pairwise_dense {t_dense / len(batches) * 1000:.1f} ms  -> ratio {t_list / t_dense:.0f}x")
    results["bt_ratio"] = t_list / t_dense

    lt = label_table(j)
    lab = lt.labels
    m = lab.shape[1]
    t0 = time.perf_counter()
    for i in range(m):
        for k in range(i + 1, m):
            both = (lab[:, i] >= 0) & (lab[:, k] >= 0)
            if both.any():
                cohen_kappa_score(lab[both, i], lab[both, k])
    t_sk = time.perf_counter() - t0
    t0 = time.perf_counter()
    cohen_kappa_matrix(j)
    t_ours = time.perf_counter() - t0
    print(f"  kappa matrix: sklearn loop {t_sk * 1000:.0f} ms, ours (incl. label table) {t_ours * 1000:.0f} ms "
          f"-> ratio {t_sk / t_ours:.1f}x")
    results["kappa_ratio"] = t_sk / t_ours

    data = np.where(lab.T >= 0, lab.T, np.nan).astype(float)
    t0 = time.perf_counter()
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    t_kp = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = krippendorff_alpha_judgements(j).value
    t_ours = time.perf_counter() - t0
    print(f"  Krippendorff alpha: package {t_kp * 1000:.0f} ms ({ref:.6f}), ours incl. label table "
          f"{t_ours * 1000:.0f} ms ({ours:.6f}) -> ratio {t_kp / t_ours:.1f}x")
    results["alpha_ratio"] = t_kp / t_ours
    return lt


def triad_alternative(j):
    sub = j.for_batch(0)
    sub = sub.subset(sub.annotator == sub.annotator[0])
    c = sub.count_matrix()
    adj = c > c.T
    t0 = time.perf_counter()
    brute = 0
    for i, k, l in combinations(range(adj.shape[0]), 3):
        if (adj[i, k] and adj[k, l] and adj[l, i]) or (adj[i, l] and adj[l, k] and adj[k, i]):
            brute += 1
    t_brute = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = count_circular_triads(adj).n_circular
    t_ours = time.perf_counter() - t0
    assert ours == brute
    print(f"  triads, one tournament: brute force {t_brute * 1000:.0f} ms, trace(A^3)/3 {t_ours * 1000:.2f} ms "
          f"-> ratio {t_brute / t_ours:.0f}x  (count {ours})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10 batches instead of 100")
    args = ap.parse_args()
    n_batches = 10 if args.quick else 100
    rng = np.random.default_rng(0)
    n_items, m = 99, 11
    noise = np.linspace(0.5, 2.5, m)

    print(f"Scenario A: {n_batches} batches x 4,851 pairs x 2 judgements, {m} annotators, 3% retest")
    theta = rng.normal(0, 1.5, (n_batches, n_items))
    t0 = time.perf_counter()
    ja = simulate_judgements(theta, None, m, 2, noise, retest_share=0.03, seed=1)
    print(f"  simulate: {len(ja):,} judgements in {time.perf_counter() - t0:.2f} s")
    res_a: dict = {}
    t0 = time.perf_counter()
    full_analytics(ja, res_a)
    total_a = time.perf_counter() - t0
    print(f"  TOTAL full analytics A: {total_a:.2f} s")
    peak_a = peak_memory(lambda: _quiet(ja))
    print(f"  peak traced memory (tracemalloc, analytics A): {peak_a:.0f} MiB")
    alternatives(ja, res_a)

    print("\nScenario B: 1 batch, 11 annotators, full overlap")
    jb = simulate_judgements(theta[0], None, m, None, noise, seed=2)
    print(f"  {len(jb):,} judgements")
    res_b: dict = {}
    t0 = time.perf_counter()
    full_analytics(jb, res_b)
    total_b = time.perf_counter() - t0
    print(f"  TOTAL full analytics B: {total_b:.2f} s")
    peak_b = peak_memory(lambda: _quiet(jb))
    print(f"  peak traced memory (tracemalloc, analytics B): {peak_b:.0f} MiB")
    alternatives(jb, res_b, n_bt_batches=1)
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    lab = label_table(jb).labels
    t0 = time.perf_counter()
    sm = fleiss_kappa(aggregate_raters(lab)[0], method="fleiss")
    t_sm = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = fleiss_kappa_judgements(jb).value
    t_ours = time.perf_counter() - t0
    print(f"  Fleiss: statsmodels {t_sm * 1000:.1f} ms ({sm:.6f}), ours incl. label table {t_ours * 1000:.1f} ms "
          f"({ours:.6f}) -> ratio {t_sm / t_ours:.1f}x")
    triad_alternative(jb)


def _quiet(j):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        full_analytics(j, {})


if __name__ == "__main__":
    main()
