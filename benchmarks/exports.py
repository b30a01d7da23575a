"""JSON and CSV exports of stored reports (shared by the API and the pages).

CSV goes through `core.csv_export`: the API asks for MACHINE (byte-faithful) CSV, the pages' download
links for SPREADSHEET CSV (formulas neutralised); see that module."""
from __future__ import annotations

from benchmarks.models import EvaluationRun, GoldSimilaritySet, SimilarityRun
from core.csv_export import MACHINE, csv_text

LOCI_TABLES = ("per_query", "per_fold", "per_pair", "summary", "rerank_sweep", "results")
#: the `locisimiles` package's `results_to_csv` columns (a run's `per_pair` table is its ground-truth file)
PACKAGE_RESULT_HEADER = ["query_id", "source_id", "source_text", "candidate_score", "judgment_score"]


def _csv(header: list[str], rows: list[list], mode: str = MACHINE) -> str:
    return csv_text(header, rows, mode=mode, float_format="{:.6f}")


def loci_report(run: EvaluationRun) -> dict:
    """The stored report with its per-query rows and the run's identity."""
    return {**(run.report or {}), "per_query": run.per_query, "run": {
        "id": run.pk, "version": run.version_id, "method": run.method, "params": run.config_params,
        "reranker": run.reranker, "reranker_params": run.reranker_config_params, "split": run.split,
        "n_folds": run.n_folds, "ks": run.ks, "seed": run.seed, "code_version": run.code_version,
        "job": run.job_id}}


def _texts(run: EvaluationRun, query_ids, source_ids) -> tuple[dict, dict]:
    from benchmarks.selectors import segment_texts

    return (segment_texts(corpus_id=run.version.query_corpus_id, seg_ids=query_ids),
            segment_texts(corpus_id=run.version.source_corpus_id, seg_ids=source_ids))


def _top_ids(row: dict) -> str:
    return " | ".join(str(source_id) for source_id, _ in row.get("top") or [])


def loci_csv(run: EvaluationRun, table: str, *, mode: str = MACHINE) -> str:
    """One table of a run's report. `per_query` and `per_pair` carry the texts and the head of each query's
    ranked list (`top_sources`: ids best first, ` | ` between; runs before it was recorded leave it empty).
    In the `locisimiles` package's formats: `per_pair` starts with its ground-truth columns
    (`query_id,source_id,label`, which its `GroundTruth` reads) and `results` is what its `results_to_csv`
    writes, each query's top 10 best first with ``judgment_score`` 1.0 (retrieval only: every listed
    source is proposed, as its retrieval pipelines' ``IdentityJudge`` gives them)."""
    ks = run.ks or []
    if table == "per_query":
        q_texts, _ = _texts(run, [row.get("query_id") for row in run.per_query], [])
        header = ["query_id", "fold", "n_gold", "n_cit", "n_cf"] + [f"recall@{k}" for k in ks] + ["rr"]
        return _csv(header + ["query_text", "top_sources"],
                    [[row.get(h) for h in header] + [q_texts.get(row.get("query_id"), ""), _top_ids(row)]
                     for row in run.per_query], mode)
    if table == "per_pair":
        pairs = (run.report or {}).get("per_pair", [])
        q_texts, s_texts = _texts(run, [p.get("query_id") for p in pairs], [p.get("source_id") for p in pairs])
        top = {row.get("query_id"): _top_ids(row) for row in run.per_query}
        header = ["query_id", "source_id", "label", "fold", "rank", "shared_lemmas", "shared_bigrams", "bucket"]
        return _csv(header + ["query_text", "source_text", "top_sources"],
                    [[row.get(h) for h in header] + [q_texts.get(row.get("query_id"), ""),
                                                     s_texts.get(row.get("source_id"), ""), top.get(row.get("query_id"), "")]
                     for row in pairs], mode)
    if table == "per_fold":
        metrics = [f"{m}@{k}" for k in ks for m in ("recall", "mrr")]
        header = ["fold", "n_queries", "n_gold"] + [f"{view}:{m}" for view in ("all", "cit.", "cf.") for m in metrics]
        rows = []
        for fold in run.per_fold:
            m = fold.get("metrics", {})
            rows.append([fold.get("fold"), fold.get("n_queries"), fold.get("n_gold")]
                        + [m.get(view, {}).get(name) for view in ("all", "cit.", "cf.") for name in metrics])
        return _csv(header, rows, mode)
    if table == "rerank_sweep":
        header = ["view", "k"] + [f"{stage}_{m}" for stage in ("ret", "rer") for m in ("inspect", "p", "r", "f1")]
        sweep = ((run.report or {}).get("rerank") or {}).get("sweep") or {}
        rows = [[view, row["k"]] + [(row.get(stage, {}).get(m) or {}).get("mean") for stage in ("ret", "rer")
                                    for m in ("inspect", "p", "r", "f1")]
                for view, block in sweep.items() for row in block]
        return _csv(header, rows, mode)
    if table == "results":  # each held-out query's ranked head as the package's pipelines write results
        pairs = [(row.get("query_id"), source_id, score) for row in run.per_query for source_id, score in
                 row.get("top") or []]
        _, s_texts = _texts(run, [], [source_id for _, source_id, _ in pairs])
        return _csv(PACKAGE_RESULT_HEADER, [[q, source_id, s_texts.get(source_id, ""), score, 1.0]
                                            for q, source_id, score in pairs], mode)
    if table == "summary":
        return _csv(["metric", "value"], [[k, v] for k, v in run.summary.items()], mode)
    raise ValueError(f"unknown table {table!r}")


def loci_trec(run: EvaluationRun, what: str, *, scores: str = "method") -> str:
    """A stored run in the retrieval researchers' formats (:mod:`benchmarks.suite.interchange`): ``run``, the TREC run
    of each query's ranked list to the run's depth (the first stage's, ranks 1, 2, 3…, the documented tie-break;
    a run stored before the whole list was kept gives its stored head, the top 10), tagged with the method;
    ``qrels``, the gold pairs it was scored on (``qid 0 docid 1``). Ids with spaces are percent-encoded.
    ``scores="rank"`` writes ``n - rank + 1`` as the score, so a tool that breaks ties its own way (trec_eval
    by docid) reads the run's own order."""
    from benchmarks.suite.interchange import qrels_text, trec_run_text

    if what == "run":
        if run.ranked:
            ranked = {str(q): [(str(sid), float(sc)) for sid, sc in pairs] for q, pairs in run.ranked.items()}
        else:
            ranked = {row["query_id"]: [(str(sid), float(sc)) for sid, sc in row.get("top") or []]
                      for row in run.per_query if row.get("query_id") is not None}
        return trec_run_text(ranked, tag=f"similia-{run.method}".replace(" ", "_"), scores=scores)
    if what == "qrels":
        gold: dict[str, dict[str, int]] = {}
        for p in (run.report or {}).get("per_pair", []):
            gold.setdefault(str(p["query_id"]), {})[str(p["source_id"])] = 1
        return qrels_text(gold)
    raise ValueError(f"unknown export {what!r}")


def gold_set_csv(gold_set: GoldSimilaritySet, *, mode: str = MACHINE) -> str:
    header = ["reference_id", "candidate_id", "reference_text", "candidate_text", "score"]
    return _csv(header, [list(row) for row in gold_set.pairs.values_list(*header)], mode)


def similarity_csv(run: SimilarityRun, *, mode: str = MACHINE) -> str:
    header = ["reference_id", "candidate_id", "gold", "predicted", "predicted_raw", "predicted_reverse"]
    return _csv(header, [[row.get(h) for h in header] for row in (run.report or {}).get("predictions", [])], mode)


def pilot_csv(run, *, mode: str = MACHINE) -> str:
    header = ["threshold", "precision", "recall", "f1", "tp", "fp", "fn"]
    return _csv(header, [[row.get(h) for h in header] for row in run.rows], mode)
