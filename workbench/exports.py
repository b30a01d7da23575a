"""Exports in the `locisimiles` package's formats: detection results like its command line's `results.csv`
(`query_id,query_text,source_id,source_text,similarity,probability,above_threshold`, then our extra
columns) or like its `results_to_json` (``{query_id: [{source_id, source_text, candidate_score,
judgment_score, predicted_class_id, predicted_label, class_probabilities}]}``), and verdicts like its
`ground_truth.csv` (`query_id,source_id,label`, label 1 = a confirmed parallel, 0 = rejected; then who
decided, when, the type and the note; "unsure" only in the JSON), which its `GroundTruth` reads.
`scripts/check_locisimiles_roundtrip.py` reads them back with the package's own classes."""
from __future__ import annotations

from core.csv_export import MACHINE, csv_text
from workbench import selectors
from workbench.engine import explain as E
from workbench.models import DetectionRun

RESULT_HEADER = ["query_id", "query_text", "source_id", "source_text", "similarity", "probability", "above_threshold",
                 "rank", "label", "p_cit", "p_cf", "shared_lemmas", "overlap", *E.CSV_COLUMNS]
VERDICT_HEADER = ["query_id", "source_id", "label", "decision", "note", "user", "decided_at", "rank", "score"]


def _result(row, has_reranker: bool) -> dict:
    qid, qtext, sid, stext, rank, score, p_cit, p_cf, label, shared, bucket, explain = row
    probability = max(p for p in (p_cit, p_cf) if p is not None) if has_reranker and p_cit is not None else None
    above = bool(label) if has_reranker else True
    return {"query_id": qid, "query_text": qtext, "source_id": sid, "source_text": stext, "similarity": score,
            "probability": probability, "above_threshold": "Yes" if above else "No", "rank": rank, "label": label,
            "p_cit": p_cit, "p_cf": p_cf, "shared_lemmas": shared, "overlap": bucket, "explain": explain or {}}


def results(run: DetectionRun, qs) -> list[dict]:
    """The JSON export's rows: the CSV's columns with the whole explanation (``explain``, ``{}`` without one)."""
    return [_result(row, bool(run.reranker)) for row in selectors.export_rows(qs)]


#: our label -> the package's (class id, label); its evaluator maps "cit"/"cf"/"no_match" like ours
PACKAGE_CLASSES = {"": (0, "no_match"), "cit.": (1, "cit"), "cf.": (2, "cf")}


def results_locisimiles(run: DetectionRun, qs) -> dict[str, list[dict]]:
    """Results as the package's `results_to_json` writes them: per query id its candidates in rank order.

    ``judgment_score`` is the CSV's ``probability`` (the larger of P(cit.) and P(cf.)) after a reranker, so the
    package's one threshold equal to ours gives our labels; without a reranker every candidate is a proposed
    link with 1.0, as the package's retrieval pipelines (``IdentityJudge``) give it."""
    out: dict[str, list[dict]] = {}
    reranked = bool(run.reranker)
    for qid, _qtext, sid, stext, _rank, score, p_cit, p_cf, label, _shared, _bucket, _ in selectors.export_rows(qs):
        match = {"source_id": sid, "source_text": stext, "candidate_score": score, "judgment_score": 1.0}
        if reranked and p_cit is not None:
            class_id, name = PACKAGE_CLASSES[label]
            match.update(judgment_score=max(p_cit, p_cf), predicted_class_id=class_id, predicted_label=name,
                         class_probabilities={"no_match": 1.0 - p_cit - p_cf, "cit": p_cit, "cf": p_cf})
        out.setdefault(qid, []).append(match)
    return out


def results_csv(run: DetectionRun, qs, *, mode: str = MACHINE) -> str:
    """The results with the explanation as flat columns (`workbench.engine.explain.flat`): fired channels,
    their contributions, the uniqueness and the matched words."""
    rows = ({**{k: v for k, v in r.items() if k != "explain"}, **E.flat(r["explain"])} for r in results(run, qs))
    return csv_text(RESULT_HEADER, rows, mode=mode, float_format="{:.6f}")


def verdicts(run: DetectionRun) -> list[dict]:
    out = []
    for v in selectors.verdict_rows(run=run):
        c = v.candidate
        label = 1 if v.decision in ("cit.", "cf.") else (0 if v.decision == "rejected" else None)
        out.append({"query_id": c.query.seg_id, "source_id": c.source.seg_id, "label": label, "decision": v.decision,
                    "note": v.note, "user": v.user.username, "decided_at": v.updated.isoformat(), "rank": c.rank,
                    "score": c.score})
    return out


def verdicts_csv(run: DetectionRun, *, mode: str = MACHINE) -> str:
    """The decided verdicts as the package's ground truth. "Unsure" ones are left out (the JSON keeps them): an
    empty label makes pandas read the column as floats, and the package then reads "0.0" as a positive label."""
    return csv_text(VERDICT_HEADER, [v for v in verdicts(run) if v["label"] is not None], mode=mode,
                    float_format="{:.6f}")


def results_trec(run: DetectionRun, qs) -> str:
    """The run's candidates as a TREC run (``benchmarks.suite.interchange``: sequential ranks, ids
    percent-encoded), each query's sources in the run's order; the score is P(cit.) + P(cf.) after a reranker,
    the retrieval score without one."""
    from benchmarks.suite.interchange import trec_run_text

    ranked: dict[str, list[tuple[str, float]]] = {}
    reranked = bool(run.reranker)
    rows = sorted(selectors.export_rows(qs), key=lambda r: (r[0], r[4]))
    for qid, _qtext, sid, _stext, _rank, score, p_cit, p_cf, _label, _shared, _bucket, _explain in rows:
        value = (p_cit + p_cf) if reranked and p_cit is not None else score
        ranked.setdefault(qid, []).append((sid, float(value)))
    return trec_run_text(ranked, f"similia-detection-{run.pk}")
