"""Every learned-ranker variant tried for the leave-one-benchmark-out goal, with its held-out figures (issue 25).

    .venv/bin/python perf/ltr_transfer_variants.py [--corpus-dir DIR] [--resamples 10000] [--only LABEL,...]

The goal: a ranker trained on one dev benchmark beats ``channels`` (the best unsupervised fusion) on the other at
R@10 and MRR@10. Selecting a variant by its held-out figures would overstate it, so this script prints, for every
variant that was ever evaluated on a held-out benchmark, both the figure the choice may use (the *training*
benchmark's own 5-fold CV, by its folds) and the held-out figures (both directions, with the paired randomisation
and t-test p-values against ``channels`` on the same queries), then the variant each honest rule picks.

Candidates: ``channels`` (each benchmark's text type as its profile; ``--corpus-dir``: Loci Similes against the whole
source corpus of ``build_corpus``, else its 408 gold sources), top 100 per gold query; the features of the suite's
``channels>feature-ltr`` (20 pair features + the 12 channel signals, each benchmark's with its own pool's
statistics, computed once). Each variant is one fit of :class:`detection.methods.rerank.ltr.PairwiseLinearRanker`
(query-normalised, the options the registry offers: ``anchor``, ``monotone`` signs, ``train_depth``, ``C``) or of
LightGBM lambdarank, on exactly these rows; ranking by the ranker's score, ties by the first-stage rank, as the
suite does (the C=0.0001 anchored row equals the suite's ``channels>feature-ltr(anchor=true,C=0.0001)@lobo``).
Variants that transform the design (per-query channel ranks, clipping, column subsets) do it here, before the fit.
``swap``: the training benchmark's candidates retrieved with the *target's* profile (label-free: the target's text
type), so the fused score the ranker anchors on means the same in training and use.
Only R@10 and MRR@10 move (ranks 101–1000 follow the first stage).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.suite import measures as MS  # noqa: E402
from benchmarks.suite import suite as S  # noqa: E402
from detection.methods.rerank.ltr import PairwiseLinearRanker  # noqa: E402

MEASURES = ("R@10", "RR@10")
PAIR = ("L->V", "V->L")  # trained on Loci Similes, held out Lucan -> Virgil; and the other way
C_GRID = (1e-4, 1e-3, 1e-2, 1e-1)


def featurised(bench: S.SuiteBenchmark, cache: dict) -> dict:
    from detection.methods import registry

    cands = S.candidates(bench, "channels", 100, cache)
    rr = registry.build("feature-ltr", {}).prepare(bench.source_texts)
    return {"bench": bench, "cands": cands, "X": rr.features(cands).astype(np.float64), "y": S.labels_of(bench, cands),
            "g": np.asarray(cands.qi), "rank": np.asarray(cands.rank), "names": rr.feature_names,
            "fold": np.asarray([bench.folds[cands.query_ids[q]] for q in cands.qi])}


# ------------------------------------------------------------------------------------------------ designs
def _per_query(X: np.ndarray, g: np.ndarray, fn) -> np.ndarray:
    out = np.empty((len(X), fn(X[:1]).shape[1]))
    for q in np.unique(g):
        rows = g == q
        out[rows] = fn(X[rows])
    return out


def channel_ranks(block: np.ndarray, kind: str) -> np.ndarray:
    """Each column's per-query rank of the candidate (ties: the best rank): ``rr`` 1/rank (0 where the channel
    scores 0), ``pct`` 1 - (rank - 1) / (n - 1)."""
    r = np.empty_like(block)
    for c in range(block.shape[1]):
        v = block[:, c]
        rank = np.searchsorted(np.sort(-v), -v, side="left") + 1
        r[:, c] = np.where(v > 0, 1.0 / rank, 0.0) if kind == "rr" else 1 - (rank - 1) / max(len(v) - 1, 1)
    return r


def design(d: dict, rows: np.ndarray, v: dict) -> tuple[np.ndarray, list[str]]:
    """The columns a variant fits on (before the ranker's own per-query normalisation)."""
    names = d["names"]
    keep = [i for i, n in enumerate(names) if v.get("cols", lambda n: True)(n)]
    X, cols = d["X"][rows][:, keep], [names[i] for i in keep]
    chan = [i for i, n in enumerate(names) if n.startswith("channel_")]
    g = d["g"][rows]
    if v.get("ranks"):
        X = np.hstack([X, _per_query(d["X"][rows][:, chan], g, lambda b: channel_ranks(b, v["ranks"]))])
        cols += [names[i] + "_" + v["ranks"] for i in chan]
    if v.get("profiles"):  # the fused score under each text type's profile, from the channel signals (no label)
        from detection.methods.lexical.multichannel import CONTEXT, PROFILES

        ch = d["X"][rows][:, chan]
        for prof in ("verse", "prose"):
            w = [CONTEXT[prof] if n == "channel_context" else PROFILES[prof].get(n.removeprefix("channel_"), 0.0)
                 for n in (names[i] for i in chan)]
            X = np.hstack([X, (ch @ np.asarray(w))[:, None]])
            cols.append(f"fused_{prof}")
    if v.get("n_channels"):
        X = np.hstack([X, (d["X"][rows][:, chan] > 0).sum(axis=1, keepdims=True)])
        cols += ["n_channels"]
    if v.get("clip"):  # z-score per query here, clipped; the ranker then leaves the columns as they are
        X = np.clip(PairwiseLinearRanker(query_norm=True)._query_normalised(X, g), -v["clip"], v["clip"])
    return X, cols


def signs_of(cols: list[str]) -> list[int]:
    up = {"retrieval_score", "retrieval_score_rel", "retrieval_rank_inv", "n_channels", "fused_verse", "fused_prose"}
    return [1 if (n in up or n.startswith("channel_")) else -1 if n == "retrieval_log_rank" else 0 for n in cols]


def fit_score(train: dict, trows: np.ndarray, test: dict, erows: np.ndarray, v: dict) -> np.ndarray:
    """The variant trained on ``train``'s rows ``trows``, its scores of ``test``'s rows ``erows``."""
    X, cols = design(train, trows, v)
    Xt, _ = design(test, erows, v)
    g, gt, y = train["g"][trows], test["g"][erows], train["y"][trows]
    if v["kind"] == "lgbm":
        return _lgbm(X, y, g, Xt, gt, cols, v)
    m = PairwiseLinearRanker(C=v["C"], max_negatives=v.get("max_negatives", 50), query_norm=not v.get("clip"),
                             anchor=cols.index("retrieval_score") if v.get("anchor", True) else None,
                             signs=signs_of(cols) if v.get("monotone") else None, train_depth=v.get("train_depth"))
    m.fit(X, y, groups=g, order=train["rank"][trows])
    return m.score(Xt, groups=gt)


def _lgbm(X, y, g, Xt, gt, cols, v) -> np.ndarray:
    """LightGBM lambdarank on the query-normalised columns (settings fixed before any run: learning rate 0.05, 7
    leaves, >= 20 rows a leaf, truncation 10, one thread, deterministic); ``monotone``: +1 on the first stage's
    evidence and the similarity features, -1 on log rank; ``init``: the fused score's z-score as the start."""
    import lightgbm as lgb

    qn = PairwiseLinearRanker(query_norm=True)._query_normalised
    Z, Zt = qn(X, g), qn(Xt, gt)
    order = np.argsort(g, kind="stable")
    _, sizes = np.unique(g[order], return_counts=True)
    similar = {"tfidf_lemma_1", "tfidf_lemma_12", "tfidf_char_34", "lemma_jaccard", "shared_lemmas",
               "shared_rare_lemmas", "shared_idf_sum", "surface_overlap", "surface_jaccard", "same_pos_from_end",
               "ordered_gapped_bigrams", "tesserae", "char3_jaccard"}
    mono = [1 if n in similar else s for n, s in zip(cols, signs_of(cols))]
    params = dict(objective="lambdarank", n_estimators=v["trees"], learning_rate=0.05, num_leaves=7,
                  min_child_samples=20, lambdarank_truncation_level=10, n_jobs=1, deterministic=True,
                  force_row_wise=True, verbose=-1, random_state=0)
    if v.get("monotone"):
        params.update(monotone_constraints=mono, monotone_constraints_method="advanced")
    a = cols.index("retrieval_score")
    init = v.get("init", 0.0)
    m = lgb.LGBMRanker(**params)
    m.fit(Z[order], y[order] > 0, group=sizes, init_score=Z[order, a] * init if init else None)
    return m.predict(Zt) + (Zt[:, a] * init if init else 0.0)


# ------------------------------------------------------------------------------------------------ measures
def per_query(d: dict, rows: np.ndarray, scores: np.ndarray) -> dict[str, dict[str, float]]:
    """R@10 and RR@10 per gold query of the rows' queries, each query's candidates by score, ties by rank."""
    c, bench = d["cands"], d["bench"]
    lists: dict[str, list[tuple[float, int, str]]] = {}
    for r, s in zip(rows, scores):
        lists.setdefault(c.query_ids[d["g"][r]], []).append((-float(s), int(d["rank"][r]), c.source_ids[c.si[r]]))
    run = {q: [src for *_, src in sorted(v)] for q, v in lists.items()}
    return MS.per_query(run, {q: bench.gold[q] for q in run}, MEASURES)


def within(d: dict, v: dict) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {m: {} for m in MEASURES}
    for f in np.unique(d["fold"]):
        tr, te = np.flatnonzero(d["fold"] != f), np.flatnonzero(d["fold"] == f)
        for m, vals in per_query(d, te, fit_score(d, tr, d, te, v)).items():
            out[m].update(vals)
    return out


def variants() -> list[tuple[str, dict]]:
    """Every variant evaluated on a held-out benchmark, in the order they were tried."""
    lin = {"kind": "linear", "anchor": True}
    chan = lambda n: n.startswith("channel_")  # noqa: E731
    out = [(f"anchored C={c:g}", {**lin, "C": c}) for c in C_GRID]
    out += [
        ("anchored monotone C=0.01", {**lin, "C": 1e-2, "monotone": True}),
        ("anchored monotone C=1", {**lin, "C": 1.0, "monotone": True}),
        ("+ channel 1/rank C=0.01", {**lin, "C": 1e-2, "ranks": "rr"}),
        ("+ channel 1/rank, n channels, monotone C=0.01", {**lin, "C": 1e-2, "ranks": "rr", "n_channels": True,
                                                           "monotone": True}),
        ("+ channel 1/rank, n channels, monotone C=1", {**lin, "C": 1.0, "ranks": "rr", "n_channels": True,
                                                        "monotone": True}),
        ("+ channel percentile, n channels, monotone C=0.01", {**lin, "C": 1e-2, "ranks": "pct",
                                                               "n_channels": True, "monotone": True}),
        ("train_depth 20 C=0.001", {**lin, "C": 1e-3, "train_depth": 20}),
        ("train_depth 20 C=0.01", {**lin, "C": 1e-2, "train_depth": 20}),
        ("train_depth 10 C=0.01", {**lin, "C": 1e-2, "train_depth": 10}),
        ("pair features only C=0.01", {**lin, "C": 1e-2, "cols": lambda n: not chan(n)}),
        ("fused score + channels only C=0.01", {**lin, "C": 1e-2, "cols": lambda n: chan(n) or n == "retrieval_score"}),
        ("fused score + channels only C=1", {**lin, "C": 1.0, "cols": lambda n: chan(n) or n == "retrieval_score"}),
        ("monotone train_depth 20 C=0.01", {**lin, "C": 1e-2, "monotone": True, "train_depth": 20}),
        ("max_negatives 10 C=0.01", {**lin, "C": 1e-2, "max_negatives": 10}),
    ]
    out += [(f"+ both profiles' fused scores C={c:g}", {**lin, "C": c, "profiles": True}) for c in (1e-4, 1e-3, 1e-2)]
    out += [(f"z-scores clipped to ±3 C={c:g}", {**lin, "C": c, "clip": 3}) for c in (1e-4, 1e-3, 1e-2)]
    out += [("z-scores clipped to ±2 C=0.01", {**lin, "C": 1e-2, "clip": 2}),
            ("clipped ±3 monotone C=0.01", {**lin, "C": 1e-2, "clip": 3, "monotone": True}),
            ("clipped ±3 train_depth 20 C=0.01", {**lin, "C": 1e-2, "clip": 3, "train_depth": 20})]
    lg = {"kind": "lgbm", "monotone": True}
    out += [("lgbm 50 trees monotone, fused start", {**lg, "trees": 50, "init": 1.0}),
            ("lgbm 50 trees monotone", {**lg, "trees": 50}),
            ("lgbm 100 trees monotone, fused start", {**lg, "trees": 100, "init": 1.0}),
            ("lgbm 20 trees monotone, fused start", {**lg, "trees": 20, "init": 1.0}),
            ("lgbm 20 trees monotone", {**lg, "trees": 20}),
            ("lgbm 100 trees monotone", {**lg, "trees": 100}),
            ("lgbm 200 trees monotone", {**lg, "trees": 200}),
            ("lgbm 50 trees", {**lg, "trees": 50, "monotone": False})]
    out += [(f"swap: anchored C={c:g}", {**lin, "C": c, "swap": True}) for c in (*C_GRID, 1.0)]
    out += [("swap: anchored monotone C=0.01", {**lin, "C": 1e-2, "monotone": True, "swap": True})]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus-dir", default=None)
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--only", default="", help="comma-separated variant labels (default: every variant)")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    cache: dict = {}
    benches = {"L": S.loci_benchmark(a.corpus_dir), "V": S.lucan_benchmark()}
    data = {k: featurised(b, cache) for k, b in benches.items()}
    swapped = {"L": "verse", "V": "prose"}  # each benchmark retrieved with the other's text type
    swap = {k: featurised(replace(b, name=b.name + "@" + swapped[k], text_type=swapped[k]), cache)
            for k, b in benches.items()}
    print(f"Loci Similes pool: {data['L']['bench'].pool} ({len(data['L']['bench'].source_ids):,} sources); "
          f"candidates and features of both benchmarks and both profiles: {time.perf_counter() - t0:.0f} s")
    chosen = [x for x in variants() if not a.only or x[0] in a.only.split(",")]
    base = {k: per_query(d, np.arange(len(d["y"])), -d["rank"].astype(float)) for k, d in data.items()}
    for k, d in data.items():
        print(f"channels on {d['bench'].name}: R@10 {MS.mean(base[k]['R@10']):.4f}, "
              f"MRR@10 {MS.mean(base[k]['RR@10']):.4f}")
    print("\n| variant | CV on Loci (R@10 / MRR@10) | CV on Lucan | Loci → Lucan R@10 Δ (p rand. / t) | MRR@10 Δ (p) "
          "| Lucan → Loci R@10 Δ (p rand. / t) | MRR@10 Δ (p) |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for label, v in chosen:
        t = time.perf_counter()
        tr = swap if v.get("swap") else data
        cv = {k: within(tr[k], v) for k in ("L", "V")}
        held = {}
        for direction, (src, dst) in zip(PAIR, (("L", "V"), ("V", "L"))):
            rows_t = np.arange(len(data[dst]["y"]))
            held[direction] = per_query(data[dst], rows_t,
                                        fit_score(tr[src], np.arange(len(tr[src]["y"])), data[dst], rows_t, v))
        cells = [label] + [f"{MS.mean(cv[k]['R@10']):.3f} / {MS.mean(cv[k]['RR@10']):.3f}" for k in ("L", "V")]
        deltas = {}
        for direction, dst in zip(PAIR, ("V", "L")):
            for m in MEASURES:
                c = MS.compare(held[direction][m], base[dst][m], n_resamples=a.resamples)
                deltas[(direction, m)] = c["delta"]
                cells.append(f"{c['mean_a']:.3f} {c['delta']:+.3f} ({c['p_randomization']:.2g} / {c['p_ttest']:.2g})")
        print("| " + " | ".join(cells) + " |", flush=True)
        # the CV gain over the first stage of the same candidates (swap variants train on other candidate lists)
        first = {k: per_query(tr[k], np.arange(len(tr[k]["y"])), -tr[k]["rank"].astype(float)) for k in cv}
        rows.append({"label": label, "v": v,
                     "cv": {k: {m: MS.mean(cv[k][m]) - MS.mean(first[k][m]) for m in MEASURES} for k in cv},
                     "delta": deltas, "seconds": time.perf_counter() - t})
    print("\nThe honest picks (chosen on the training benchmark's own CV: the largest gain in MRR@10 over the first "
          "stage of the same candidates, ties by R@10):")
    for direction, src in zip(PAIR, ("L", "V")):
        for scope, pool in (("anchored C grid (the rule written down in round 3)",
                             [r for r in rows if r["label"].startswith("anchored C=")]),
                            ("every variant above", rows)):
            if not pool:
                continue
            best = max(pool, key=lambda r: (r["cv"][src]["RR@10"], r["cv"][src]["R@10"]))
            print(f"  {direction}, among the {scope}: {best['label']} -> held-out Δ R@10 "
                  f"{best['delta'][(direction, 'R@10')]:+.4f}, Δ MRR@10 {best['delta'][(direction, 'RR@10')]:+.4f}")
    print(f"\n{len(rows)} variants, {time.perf_counter() - t0:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
