"""Retrieve-and-rerank on the Loci Similes folds (seed 000 §4.2, §5.3, Tables 2/8/12, Appendices H, I).

Per fold f: the first stage ranks the whole source pool for every query (an unsupervised retriever is fitted
once on the pool); the reranker is trained on the top-k candidates of the *other* folds' queries (labels from
their gold) and scores the held-out fold's candidates; thresholds are tuned on the training folds only and
frozen. Reported beside the first stage alone: Recall@k and MRR@k (pooled and per type, per query → macro per
fold → mean ± std), P/R/F1 per class with the plateau thresholds (pooled over the fold's pairs; gold pairs that
were not retrieved count as misses), and the depth sweep of Table 12 with the passages to inspect.
A first stage stored per fold (a bi-encoder fine-tuned by a training job, ``dense-encoder`` with ``model=NAME``)
ranks with ``NAME/fold-<f>`` for fold f: that model retrieves every query, its reranker trains on the other folds'
candidates as it ranks them and scores the held-out fold's. Every fold records the queries its reranker and its
first stage trained on that are held-out queries of that fold (``leaked_queries``, ``retriever_leaked_queries``);
any other count than 0 (a stored model of another split, or one trained on all folds) raises :class:`LeakError`.
"""
from __future__ import annotations

import time

import numpy as np

from core.numeric import json_safe as _clean
from detection.methods.rerank import pipeline as P
from detection.methods.rerank.thresholds import decide

from . import metrics as M
from .data import Benchmark
from .evaluate import (
    _fold_summary,
    _gold_arrays,
    _per_query_metrics,
    code_version,
    source_pool,
)
from .splits import Split

SCHEMA = "similia.loci.rerank/1"
RERANK_SWEEP_KS = (1, 5, 10, 20, 50, 100)
_CLASS = {"cit.": 1, "cf.": 2, "link": 1}


def gold_classes(bench: Benchmark) -> dict[tuple[str, str], int]:
    """{(query, source): 1 cit. / 2 cf.} (a link of unknown type counts as cit.)."""
    return {(g.query_id, g.source_id): _CLASS.get(g.label, 1) for g in bench.gold}


def _fold_reranker(config, fold: int, shared: dict):
    """The reranker for one fold, built from its configuration (configured once, not validated again): a fresh
    instance sharing the fitted featurizer; a stored model laid out per fold (``<model>/fold-<f>``, found in the
    model store) gives that fold's model."""
    from detection.methods import registry
    from detection.methods.infrastructure import model_store

    spec = registry.get_spec(config.name)
    model = config.params.get("model")
    if model and "/" not in str(model):
        per_fold = f"{model}/fold-{fold}"
        if model_store.local_path(per_fold) is not None:
            config = registry.configure(config.name, {**config.params, "model": per_fold}, kind=config.kind)
    context = registry.BuildContext.default(cache_dir=shared.get("cache_dir"))
    objects = {k: v for k, v in shared.items() if k in spec.internal and k != "cache_dir"}
    return registry.build_config(config, context, **objects)


class LeakError(ValueError):
    """A fold's first-stage or second-stage model was trained on one of that fold's held-out queries."""


def _may_see(bench: Benchmark, split: Split, fold: int) -> list[str]:
    """The queries fold ``fold``'s models may have trained on: every query of the benchmark but its held-out ones
    (a subset evaluation leaves queries out of the split that a model trained on the whole split has seen)."""
    held_out = set(split.fold_queries(fold))
    return [q.seg_id for q in bench.queries if q.seg_id not in held_out]


def _first_stage(retriever, bench: Benchmark, split: Split, pool_ids, s_texts, queries, q_texts, depth: int,
                 prog) -> list:
    """The first stage's candidates per fold: ``[(candidates, indices, scores)]``, one set shared by every fold for
    an unsupervised retriever (fitted once on the pool), one per fold for a retriever stored per fold (a
    fine-tuned bi-encoder ``NAME/fold-<f>``, which ranks every query so that fold's reranker trains on the other
    folds' candidates as that model retrieves them and scores its held-out fold's)."""
    per_fold = bool(getattr(retriever, "fold_models", False))
    # every query in the benchmark's order: a first stage reading neighbouring lines reads each query's own
    line_of = {s.seg_id: i for i, s in enumerate(bench.queries)}
    lines, line_index = [s.text for s in bench.queries], [line_of[q] for q in queries]
    out = []
    for f in range(split.n_folds if per_fold else 1):
        if per_fold:
            retriever.use_fold(f, _may_see(bench, split, f))
        name = getattr(retriever, "name", "?")
        prog(0.02 + 0.15 * f / split.n_folds, f"retrieval: fitting {name}{f' (fold {f})' if per_fold else ''} on "
             f"{len(pool_ids)} sources")
        retriever.fit(pool_ids, s_texts)
        # checked before searching: a first stage shared by every fold must not have seen any evaluated query
        leaked = _seen(retriever, set(split.fold_queries(f)) if per_fold else set(queries))
        if leaked:
            raise LeakError(f"{'fold ' + str(f) if per_fold else 'every fold'}: the first stage "
                            f"({_active_model(retriever)}) trained on {leaked} of the held-out queries: refusing it")
        meta = {"retriever": getattr(retriever, "name", None)}
        if callable(getattr(retriever, "search_signals", None)):  # with its per-candidate signals (channels')
            idx, sc, sig, names = retriever.search_signals(queries, q_texts, depth, lines=lines, line_index=line_index)
            out.append((P.from_topk(queries, q_texts, pool_ids, s_texts, idx, sc, meta, sig, names), idx, sc))
            continue
        idx, sc = retriever.search(queries, q_texts, depth)
        idx, sc = np.asarray(idx), np.asarray(sc)
        out.append((P.from_topk(queries, q_texts, pool_ids, s_texts, idx, sc, meta), idx, sc))
    return out


def _seen(model, held_out: set[str]) -> int:
    """How many of ``held_out`` the model (a reranker's ``training_queries``, a retriever's ``seen_queries()``)
    was trained on."""
    seen = model.seen_queries() if hasattr(model, "seen_queries") else getattr(model, "training_queries", set())
    return len(set(seen) & held_out)


def evaluate_rerank(bench: Benchmark, split: Split, retriever, reranker, reranker_params: dict | None = None,
                    *, k: int = 100, ks=(1, 5, 10, 20, 50, 100), sweep_ks=RERANK_SWEEP_KS, pool: str = "auto",
                    cache_dir=None, progress=None, benchmark_info: dict | None = None) -> dict:
    """Evaluate ``retriever`` (a :mod:`benchmarks.loci.method_adapters` retrieval method) followed by the registered
    reranker ``reranker`` on held-out folds: a ``MethodConfig`` (a run's stored one, used as it is), or a
    registered name configured here once with ``reranker_params``.

    A retriever stored per fold (``fold_models``: a fine-tuned bi-encoder named ``NAME``) ranks with
    ``NAME/fold-<f>`` for fold f; a stored reranker (``model``) uses ``<model>/fold-<f>``. Every fold's models are
    checked against its held-out queries: one that trained on any of them raises :class:`LeakError`.

    Returns:
        JSON-safe dict (schema ``similia.loci.rerank/1``): ``retrieval`` and ``rerank`` (``recall@K``/``mrr@K``
        pooled, ``by_type``, ``metrics`` with mean ± std), ``classification`` (per class P/R/F1 per fold and
        mean ± std), ``thresholds`` per fold, ``sweep`` (Table 12 per view), ``folds`` (training/held-out query
        counts, leaked queries, the first-stage model), ``timing``.
    """
    t0 = time.perf_counter()
    prog = progress or (lambda f, m="": None)
    from detection.methods import registry

    config = reranker if isinstance(reranker, registry.MethodConfig) else \
        registry.configure(reranker, dict(reranker_params or {}), kind="reranker")
    reranker_name, params = config.name, dict(config.params)
    timing = {}
    pool_ids, pool_kind = source_pool(bench, pool)
    sseg = {s.seg_id: s for s in bench.sources}
    qseg = {s.seg_id: s for s in bench.queries}
    queries = [q for f in range(split.n_folds) for q in split.fold_queries(f) if q in qseg]
    qfold = np.asarray([split.query_fold[q] for q in queries], np.int64)
    q_texts = [qseg[q].text for q in queries]
    s_texts = [sseg[s].text for s in pool_ids]
    depth = int(min(k, len(pool_ids)))
    shared = {"cache_dir": cache_dir}
    stored = {}
    if params.get("model"):  # stored models: refused before any work when one saw its held-out fold
        for f in range(split.n_folds):
            stored[f] = _fold_reranker(config, f, shared)
            leaked = _seen(stored[f], set(split.fold_queries(f)))
            if leaked:
                raise LeakError(f"fold {f}: the reranker trained on {leaked} of its held-out queries (a model of "
                                f"another split, or one trained on all folds): refusing it")
    t = time.perf_counter()
    stages = _first_stage(retriever, bench, split, pool_ids, s_texts, queries, q_texts, depth, prog)
    timing["retrieve_s"] = time.perf_counter() - t
    gold = gold_classes(bench)
    t = time.perf_counter()
    prog(0.2, f"features of {sum(len(c) for c, _, _ in stages)} candidate pairs")
    first = stored[0] if stored else _fold_reranker(config, 0, shared)
    Xs = None
    if hasattr(first, "prepare"):
        if getattr(first, "featurizer", None) is None:
            first.prepare(s_texts)
        shared["featurizer"] = first.featurizer if hasattr(first, "featurizer") else first._inner.featurizer
        Xs = [first.features(c) for c, _, _ in stages]
    timing["features_s"] = time.perf_counter() - t
    parts, part_probs, part_labels = [], [], []
    ret_idx = np.full((len(queries), stages[0][1].shape[1]), -1, np.int64)
    fold_rows, thresholds = [], []
    t = time.perf_counter()
    for f in range(split.n_folds):
        prog(0.3 + 0.5 * f / split.n_folds, f"fold {f}: training and reranking")
        s_i = f if len(stages) > 1 else 0
        cands, idx, _ = stages[s_i]
        X = Xs[s_i] if Xs is not None else None
        if len(stages) > 1:
            retriever.use_fold(f, _may_see(bench, split, f))  # back to fold f's model (its card: seen queries)
        cand_fold = qfold[cands.qi]
        test = np.nonzero(cand_fold == f)[0]
        train = np.nonzero(cand_fold != f)[0]
        rr = first if f == 0 else stored[f] if stored else _fold_reranker(config, f, shared)
        # a stored model is used as it is, with the thresholds its training job tuned on its training folds
        if not params.get("model"):
            kw = {"gold": {key: c for key, c in gold.items() if split.query_fold.get(key[0], -1) != f}}
            if X is not None:
                kw["X"] = X[train]
            rr.fit(cands.subset(train), cands.labels(gold)[train], **kw)
        held_out = set(split.fold_queries(f))
        leaks = {"leaked_queries": _seen(rr, held_out), "retriever_leaked_queries": _seen(retriever, held_out)}
        if any(leaks.values()):
            raise LeakError(f"fold {f}: the reranker trained on {leaks['leaked_queries']} and the first stage on "
                            f"{leaks['retriever_leaked_queries']} of its held-out queries (a model of another "
                            f"split, or one trained on all folds): refusing to report it")
        te_c = cands.subset(test)
        probs = np.asarray(rr.predict_proba(te_c, **({"X": X[test]} if X is not None else {})), np.float64)
        parts.append(te_c)
        part_probs.append(probs)
        part_labels.append(decide(probs, rr.thresholds))
        ret_idx[qfold == f] = idx[qfold == f]
        thresholds.append({"fold": f, **{c: rr.thresholds[c] for c in ("cit.", "cf.")}})
        fold_rows.append({"fold": f, "n_queries": int((qfold == f).sum()),
                          "n_train_queries": len(rr.training_queries), "n_train_pairs": int(train.size),
                          "n_test_pairs": int(test.size), **leaks,
                          "retriever_model": _active_model(retriever)})
    timing["rerank_s"] = time.perf_counter() - t
    # every fold's held-out rows, each ranked by that fold's first stage and scored by that fold's reranker
    cands = P.Candidates.concat(parts)
    probs, labels_pred = np.concatenate(part_probs), np.concatenate(part_labels)
    y = cands.labels(gold)
    cand_fold = qfold[cands.qi]
    prog(0.85, "metrics")
    report = {"schema": SCHEMA, "benchmark": benchmark_info or bench.summary(), "split": split.to_dict(),
              "retriever": retriever.describe() if hasattr(retriever, "describe") else {"name": "?"},
              "reranker": {"name": reranker_name, "params": params},
              "pool": {"kind": pool_kind, "n_sources": len(pool_ids), "n_queries": len(queries), "depth": depth,
                       "first_stage_per_fold": len(stages) > 1},
              "ks": list(ks), "code_version": code_version(), "folds": fold_rows, "thresholds": thresholds}
    q_index = {q: i for i, q in enumerate(queries)}
    s_index = {s: j for j, s in enumerate(pool_ids)}
    gq, gs, gc, _ = _gold_arrays(bench, q_index, s_index)
    counts = M.gold_counts(gq, gc, len(queries))
    rer_idx, _rer_sc = P.reranked_topk(cands, probs, len(queries))
    ks = [kk for kk in ks if kk <= depth]
    for stage, ind in (("retrieval", ret_idx), ("rerank", rer_idx)):
        hits = M.retrieved_gold_classes(ind, gq, gs, gc, len(pool_ids))
        summary, _ = _fold_summary(_per_query_metrics(hits, counts, ks), None, qfold, split.n_folds)
        report[stage] = {**{f"recall@{kk}": summary["all"][f"recall@{kk}"]["mean"] for kk in ks},
                         **{f"mrr@{kk}": summary["all"][f"mrr@{kk}"]["mean"] for kk in ks},
                         "by_type": {v: {**{f"recall@{kk}": summary[v][f"recall@{kk}"]["mean"] for kk in ks},
                                         **{f"mrr@{kk}": summary[v][f"mrr@{kk}"]["mean"] for kk in ks}}
                                     for v in ("cit.", "cf.")},
                         "metrics": summary}
    report["classification"] = _classification(cands, y, labels_pred, gold, split, queries, qfold, cand_fold)
    report["sweep"] = _sweep(cands, labels_pred, gold, split, cand_fold, [s for s in sweep_ks if s <= depth] or [depth])
    timing["total_s"] = time.perf_counter() - t0
    report["timing"] = timing
    prog(1.0, "done")
    return _clean(report)


def _active_model(retriever) -> str | None:
    info = retriever.describe().get("retriever", {}) if hasattr(retriever, "describe") else {}
    return info.get("model") if isinstance(info, dict) else None


def _classification(cands, y, pred, gold, split, queries, qfold, cand_fold) -> dict:
    out = {}
    for view, cid in (("all", None), ("cit.", 1), ("cf.", 2)):
        folds = []
        for f in range(split.n_folds):
            rows = cand_fold == f
            qs = {queries[i] for i in np.nonzero(qfold == f)[0]}
            n_gold = sum(1 for (q, _), c in gold.items() if q in qs and (cid is None or c == cid))
            if cid is None:
                tp = int(((pred > 0) & (y > 0) & rows).sum())
                npred = int(((pred > 0) & rows).sum())
            else:
                tp = int(((pred == cid) & (y == cid) & rows).sum())
                npred = int(((pred == cid) & rows).sum())
            folds.append(P._prf(tp, npred, n_gold))
        out[view] = {"folds": folds, "mean": {m: M.mean_std([x[m] for x in folds]) for m in ("p", "r", "f1")}}
    return out


def _sweep(cands, pred, gold, split, cand_fold, sweep_ks) -> dict:
    out = {}
    for view in ("all", "cit.", "cf."):
        per_fold = [P.depth_sweep(cands.subset(np.nonzero(cand_fold == f)[0]), pred[cand_fold == f],
                                  {key: c for key, c in gold.items() if split.query_fold.get(key[0]) == f},
                                  sweep_ks, view) for f in range(split.n_folds)]
        rows = []
        for i, kk in enumerate(sweep_ks):
            row = {"k": kk}
            for stage in ("ret", "rer"):
                row[stage] = {m: M.mean_std([pf[i][stage][m] for pf in per_fold])
                              for m in ("inspect", "p", "r", "f1")}
            rows.append(row)
        out[view] = rows
    return out


def _parse_params(items) -> dict:
    from core import safejson

    params = {}
    for item in items:
        key, _, value = item.partition("=")
        params[key] = safejson.loads(value) if value[:1] in "0123456789-[{tfn" else value
    return params


def _summary_lines(rep: dict, label: str = "") -> list[str]:
    out = []
    for stage in ("retrieval", "rerank"):
        r = rep[stage]
        out.append(f"{label}{stage}: MRR@10 {r['mrr@10']:.3f}  R@10 {r['recall@10']:.3f}  "
                   f"cit. MRR@10 {r['by_type']['cit.']['mrr@10']:.3f}  R@10 {r['by_type']['cit.']['recall@10']:.3f}  "
                   f"cf. MRR@10 {r['by_type']['cf.']['mrr@10']:.3f}  R@10 {r['by_type']['cf.']['recall@10']:.3f}")
    return out


def main(argv=None) -> int:
    """``python -m benchmarks.loci.rerank_eval --corpus-dir DIR --reranker feature-hgb [--retriever bm25-lemma]
    [--retriever-param name=value ...] [--k 100] [--param name=value ...] [--without name ...] --out report.json``
    (the 545 pairs, the ref_type folds). ``--without vectors`` evaluates the same reranker a second time in the same
    run, on the same folds and the same first-stage candidates, without that parameter (an ablation row)."""
    import argparse
    import json

    from . import loci_commands, method_adapters, splits

    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.rerank_eval")
    p.add_argument("--corpus-dir", help="query.csv/source.csv of build_corpus (default: the gold sources only)")
    p.add_argument("--retriever", default="bm25-lemma")
    p.add_argument("--retriever-param", action="append", default=[],
                   help="retriever parameter name=value, e.g. model=NAME (a bi-encoder stored per fold)")
    p.add_argument("--reranker", default="feature-logreg")
    p.add_argument("--param", action="append", default=[], help="reranker parameter name=value")
    p.add_argument("--without", action="append", default=[],
                   help="also evaluate the reranker without this parameter (same folds, same run)")
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--out")
    a = p.parse_args(argv)
    bench, _ = loci_commands.load_545_with_corpus(a.corpus_dir)
    split = splits.split_from_file(bench, "ref_type")
    params = _parse_params(a.param)
    variants = [("", params)]
    if a.without:
        variants.append((f"without {'+'.join(a.without)}: ", {k: v for k, v in params.items() if k not in a.without}))
    retriever = method_adapters.EngineRetrieverMethod(a.retriever, **_parse_params(a.retriever_param))
    reports, lines = [], []
    for label, prm in variants:
        t = time.perf_counter()
        rep = evaluate_rerank(bench, split, retriever, a.reranker, prm, k=a.k,
                              pool="corpus" if a.corpus_dir else "gold",
                              progress=lambda f, m="", label=label: print(f"{label}[{f:4.0%}] {m}", flush=True))
        rep["timing"]["wall_s"] = time.perf_counter() - t
        reports.append(rep)
        lines += _summary_lines(rep, label) + [f"{label}timing: " + ", ".join(
            f"{k} {v:.0f} s" for k, v in rep["timing"].items())]
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            json.dump(reports[0] if len(reports) == 1 else {"runs": reports}, fh, indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
