"""LightGBM lambdarank against the linear pairwise ranker (``feature-ltr``) on the same candidates and features.

    .venv/bin/python perf/ltr_lightgbm_bench.py [--depth 100] [--trees 300] [--resamples 10000]

Both benchmarks of the suite (Loci Similes against its 408 gold sources, Lucan → Virgil lines against the Aeneid),
BM25-lemma's top ``depth`` per gold query, the 20 per-pair features of ``feature-ltr`` (each benchmark's with its own
pool's statistics, as the suite computes them). On exactly those rows:

- ``linear`` = :class:`detection.methods.rerank.ltr.PairwiseLinearRanker` (``query_norm`` on, the shipped default);
- ``lgbm-qn`` = LightGBM ``LGBMRanker(objective="lambdarank")`` on the same query-normalised features;
- ``lgbm-raw`` = the same on the raw features (trees are invariant to a feature's global scaling, not to a
  per-query shift, so both are measured).

LightGBM's settings are fixed before looking at any result (300 trees, learning rate 0.05, 15 leaves, at least 20
rows a leaf, binary relevance, ``lambdarank_truncation_level`` 20, one thread, deterministic); nothing is tuned on
the held-out side. Modes: leave one benchmark out (train on every query of one, rank the other; both directions)
and within each benchmark (its five folds; fold f's model trains on the other folds). Per query R@10 and RR@10
(``benchmarks.suite.measures``, checked against ir-measures elsewhere), their means and the paired randomisation /
t-test p-values of each LightGBM variant against the linear ranker on the same queries; training seconds of each.
Ranks 101–1000 follow the first stage, so R@100 and beyond do not move and are not shown.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.suite import measures as MS  # noqa: E402
from benchmarks.suite import suite as S  # noqa: E402
from detection.methods.rerank.ltr import PairwiseLinearRanker  # noqa: E402

MEASURES = ("R@10", "RR@10")


def featurised(bench, depth: int, cache: dict) -> dict:
    from detection.methods import registry

    cands = S.candidates(bench, "bm25-lemma", depth, cache)
    rr = registry.build("feature-ltr", {}).prepare(bench.source_texts)
    X = rr.features(cands)
    y = (S.labels_of(bench, cands) > 0).astype(np.int64)
    qids = np.asarray([cands.query_ids[q] for q in cands.qi])
    return {"bench": bench, "cands": cands, "X": X, "y": y, "q": qids, "rank": np.asarray(cands.rank)}


def query_norm(X: np.ndarray, groups: np.ndarray) -> np.ndarray:
    return PairwiseLinearRanker(query_norm=True)._query_normalised(X, groups)


def fit_linear(X, y, groups, order):
    return PairwiseLinearRanker(query_norm=True).fit(X, y, groups=groups, order=order)


def fit_lgbm(X, y, groups, trees: int):
    import lightgbm as lgb

    order = np.argsort(groups, kind="stable")  # LightGBM wants each query's rows together
    _, sizes = np.unique(groups[order], return_counts=True)
    # np.unique sorts, and so does the stable argsort: the group sizes follow the rows' order
    m = lgb.LGBMRanker(objective="lambdarank", n_estimators=trees, learning_rate=0.05, num_leaves=15,
                       min_child_samples=20, lambdarank_truncation_level=20, n_jobs=1, deterministic=True,
                       force_row_wise=True, random_state=0, verbose=-1)
    m.fit(X[order], y[order], group=sizes)
    return m


def ranked(data: dict, rows: np.ndarray, scores: np.ndarray) -> dict[str, list[str]]:
    """Each query's candidates by score (higher first), ties by first-stage rank."""
    cands = data["cands"]
    out: dict[str, list[tuple[float, int, str]]] = {}
    for r, s in zip(rows, scores):
        out.setdefault(data["q"][r], []).append((-float(s), int(data["rank"][r]), cands.source_ids[cands.si[r]]))
    return {q: [src for _, _, src in sorted(v)] for q, v in out.items()}


def measure(data: dict, run: dict[str, list[str]], queries) -> dict[str, dict[str, float]]:
    gold = {q: data["bench"].gold[q] for q in queries}
    return MS.per_query({q: run.get(q, []) for q in queries}, gold, MEASURES)


def train_and_rank(train: list[tuple[dict, np.ndarray]], test: tuple[dict, np.ndarray], trees: int) -> dict:
    """Each model trained on the ``train`` rows (stacked; groups kept apart per benchmark) and scored on ``test``."""
    Xs, ys, gs, os_ = [], [], [], []
    for i, (d, rows) in enumerate(train):
        Xs.append(d["X"][rows])
        ys.append(d["y"][rows])
        gs.append(np.asarray([f"{i}:{q}" for q in d["q"][rows]]))
        os_.append(d["rank"][rows])
    X, y, g, order = np.vstack(Xs), np.concatenate(ys), np.concatenate(gs), np.concatenate(os_)
    _, gi = np.unique(g, return_inverse=True)
    td, trows = test
    tg = np.unique(td["q"][trows], return_inverse=True)[1]
    Xt = td["X"][trows]
    out = {"first stage": (-td["rank"][trows].astype(float), 0.0)}
    t = time.perf_counter()
    lin = fit_linear(X, y, gi, order)
    out["linear"] = (lin.score(Xt, tg), time.perf_counter() - t)
    t = time.perf_counter()
    m = fit_lgbm(query_norm(X, gi), y, gi, trees)
    out["lgbm-qn"] = (m.predict(query_norm(Xt, tg)), time.perf_counter() - t)
    t = time.perf_counter()
    m = fit_lgbm(X, y, gi, trees)
    out["lgbm-raw"] = (m.predict(Xt), time.perf_counter() - t)
    return out


def report(title: str, data: dict, runs: dict[str, dict[str, list[str]]], seconds: dict, resamples: int) -> None:
    queries = sorted(data["bench"].gold)
    per = {name: measure(data, run, queries) for name, run in runs.items()}
    print(f"\n{title} ({len(queries)} queries)")
    print("| model | R@10 | MRR@10 | Δ R@10 vs linear (p rand. / t) | Δ MRR@10 vs linear (p rand. / t) | train s |")
    print("|---|---|---|---|---|---|")
    for name in runs:
        cells = [f"{MS.mean(per[name][m]):.3f}" for m in MEASURES]
        for m in MEASURES:
            if name in ("linear", "first stage"):
                cells.append("–")
                continue
            c = MS.compare(per[name][m], per["linear"][m], n_resamples=resamples)
            cells.append(f"{c['delta']:+.3f} ({c['p_randomization']:.2g} / {c['p_ttest']:.2g})")
        print(f"| {name} | " + " | ".join(cells) + f" | {seconds.get(name, 0.0):.1f} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--trees", type=int, default=300)
    p.add_argument("--resamples", type=int, default=10_000)
    a = p.parse_args(argv)
    import lightgbm

    t0 = time.perf_counter()
    cache: dict = {}
    data = {n: featurised(S.BENCHMARKS[n](), a.depth, cache) for n in ("loci-similes", "lucan-vergil")}
    print(f"lightgbm {lightgbm.__version__}; candidates and features of both benchmarks: "
          f"{time.perf_counter() - t0:.1f} s "
          + ", ".join(f"{n} {len(d['y'])} rows / {int(d['y'].sum())} positive" for n, d in data.items()))
    for held, train in (("lucan-vergil", "loci-similes"), ("loci-similes", "lucan-vergil")):
        d, tr = data[held], data[train]
        res = train_and_rank([(tr, np.arange(len(tr["y"])))], (d, np.arange(len(d["y"]))), a.trees)
        rows = np.arange(len(d["y"]))
        report(f"Leave one benchmark out: {held} held out (trained on {train})", d,
               {n: ranked(d, rows, s) for n, (s, _) in res.items()}, {n: t for n, (_, t) in res.items()},
               a.resamples)
    for name, d in data.items():
        runs: dict[str, dict[str, list[str]]] = {}
        seconds: dict[str, float] = {}
        folds = np.asarray([d["bench"].folds[q] for q in d["q"]])
        for f in range(d["bench"].n_folds):
            te, tr = np.flatnonzero(folds == f), np.flatnonzero(folds != f)
            res = train_and_rank([(d, tr)], (d, te), a.trees)
            for n, (s, t) in res.items():
                runs.setdefault(n, {}).update(ranked(d, te, s))
                seconds[n] = seconds.get(n, 0.0) + t
        report(f"Within {name} ({d['bench'].n_folds} folds)", d, runs, seconds, a.resamples)
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
