"""Per-query ranking metrics and paired significance tests for runs over any benchmark (no Django).

A **run** is ``{query_id: [source_id, ...]}`` best first (the order is the run's: ties were broken when it was
made, see :mod:`benchmarks.suite.interchange`). **Gold** is ``{query_id: {source_id: class}}`` with class 1
``cit.``, 2 ``cf.`` (a link of unknown type counts as 1). Only queries with gold are measured; a gold query the
run does not hold scores 0 everywhere (``trec_eval -c``).

Formulas, per query q with relevant set G_q (the view's class, any class for ``all``) and ranked list L_q:

- ``R@k`` = |G_q ∩ L_q[:k]| / |G_q|
- ``RR@k`` = 1 / (rank of the first relevant item) if it is within k, else 0; ``MRR@k`` its mean
- ``nDCG@k`` = DCG / IDCG with binary gains, DCG = Σ_{i ≤ k, L_q[i] ∈ G_q} 1 / log2(i + 1),
  IDCG = Σ_{i ≤ min(k, |G_q|)} 1 / log2(i + 1)
- global recall at N pairs: every (q, s, score) of the run pooled, the N best by score (ties: the query's own
  rank, then query order), the share of all gold pairs among them. Scores must be comparable across queries for
  this to mean anything; it is what a reader who reads the N best pairs of a whole result list gets.

These agree with ``ir-measures`` (pytrec_eval) ``R@k``, ``RR@k`` and ``nDCG@k`` to 1e-9 (tests).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

VIEWS = ("all", "cit.", "cf.")
_VIEW_CLASS = {"cit.": 1, "cf.": 2}
DEFAULT_MEASURES = ("R@1", "R@10", "R@100", "R@1000", "RR@10", "nDCG@10")


def relevant(gold_q: Mapping[str, int], view: str = "all") -> set[str]:
    if view == "all":
        return {s for s, c in gold_q.items() if c > 0}
    return {s for s, c in gold_q.items() if c == _VIEW_CLASS[view]}


def _parse(measure: str) -> tuple[str, int]:
    name, _, k = measure.partition("@")
    if name not in ("R", "RR", "nDCG") or not (k.isascii() and k.isdigit()):
        raise ValueError(f"unknown measure {measure!r}: use R@k, RR@k or nDCG@k")
    return name, int(k)


def query_value(measure: str, ranked: Sequence[str], rel: set[str]) -> float:
    """One measure for one query (NaN when the query has no relevant item)."""
    if not rel:
        return math.nan
    name, k = _parse(measure)
    top = ranked[:k]
    if name == "R":
        return sum(1 for s in top if s in rel) / len(rel)
    if name == "RR":
        return next((1.0 / (i + 1) for i, s in enumerate(top) if s in rel), 0.0)
    dcg = sum(1.0 / math.log2(i + 2) for i, s in enumerate(top) if s in rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(rel))))
    return dcg / idcg


def per_query(run: Mapping[str, Sequence[str]], gold: Mapping[str, Mapping[str, int]],
              measures: Sequence[str] = DEFAULT_MEASURES, view: str = "all") -> dict[str, dict[str, float]]:
    """``{measure: {query_id: value}}`` over the gold queries that have relevant items in this view."""
    out: dict[str, dict[str, float]] = {m: {} for m in measures}
    for q in sorted(gold):
        rel = relevant(gold[q], view)
        if not rel:
            continue
        ranked = run.get(q, ())
        for m in measures:
            out[m][q] = query_value(m, ranked, rel)
    return out


def global_recall(scored: Mapping[str, Sequence[tuple[str, float]]], gold: Mapping[str, Mapping[str, int]],
                  n_pairs: int) -> float:
    """Share of all gold pairs among the ``n_pairs`` best-scored pairs of the whole run (see module doc)."""
    n_gold = sum(len(relevant(g)) for g in gold.values())
    if not n_gold:
        return math.nan
    rows = [(-float(sc), r, qi, q, s) for qi, q in enumerate(sorted(scored))
            for r, (s, sc) in enumerate(scored[q])]
    rows.sort(key=lambda t: t[:3])
    found = sum(1 for *_, q, s in rows[:n_pairs] if gold.get(q, {}).get(s, 0) > 0)
    return found / n_gold


def mean(values: Mapping[str, float]) -> float:
    v = [x for x in values.values() if not math.isnan(x)]
    return float(np.mean(v)) if v else math.nan


# ----------------------------------------------------------------------------------------------- significance
def paired(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """The two runs' values on the queries both measured (sorted by query id)."""
    qs = sorted(q for q in a if q in b and not (math.isnan(a[q]) or math.isnan(b[q])))
    return np.asarray([a[q] for q in qs], np.float64), np.asarray([b[q] for q in qs], np.float64)


def randomization_test(a, b, *, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of mean(a - b) = 0 over queries.

    Each resample flips the sign of every query's difference with probability 1/2; p = (1 + #{|mean*| ≥
    |mean|}) / (1 + n_resamples) (the +1 counts the observed assignment, so p is never 0)."""
    d = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    if d.size == 0:
        return math.nan
    obs = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):
        n = min(2000, n_resamples - start)
        signs = rng.integers(0, 2, size=(n, d.size), dtype=np.int8) * 2 - 1
        hits += int((np.abs((signs * d).mean(axis=1)) >= obs - 1e-12).sum())
    return (1 + hits) / (1 + n_resamples)


def t_test(a, b) -> float:
    """Two-sided paired t-test p-value (scipy's ``ttest_rel``); 1.0 when every difference is 0."""
    from scipy.stats import ttest_rel

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.size < 2:
        return math.nan
    if np.allclose(a, b):
        return 1.0
    return float(ttest_rel(a, b).pvalue)


def compare(a: Mapping[str, float], b: Mapping[str, float], *, n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Mean difference a - b over the queries both measured, with both tests' p-values."""
    x, y = paired(a, b)
    return {"n_queries": int(x.size), "mean_a": float(x.mean()) if x.size else None,
            "mean_b": float(y.mean()) if y.size else None, "delta": float((x - y).mean()) if x.size else None,
            "p_randomization": randomization_test(x, y, n_resamples=n_resamples, seed=seed),
            "p_ttest": t_test(x, y), "wins": int((x > y).sum()), "losses": int((x < y).sum())}
