"""Exports in the `locisimiles` package's formats: detection results like its `results.csv`
(`query_id,query_text,source_id,source_text,similarity,probability,above_threshold`, then our extra
columns) and verdicts like its `ground_truth.csv` (`query_id,source_id,label`, label 1 = a confirmed
parallel, 0 = rejected; then who decided, when, the type and the note)."""
from __future__ import annotations

from core.csv_export import MACHINE, csv_text
from workbench import selectors
from workbench.models import DetectionRun

RESULT_HEADER = ["query_id", "query_text", "source_id", "source_text", "similarity", "probability", "above_threshold",
                 "rank", "label", "p_cit", "p_cf", "shared_lemmas", "overlap"]
VERDICT_HEADER = ["query_id", "source_id", "label", "decision", "note", "user", "decided_at", "rank", "score"]


def _result(row, has_reranker: bool) -> dict:
    qid, qtext, sid, stext, rank, score, p_cit, p_cf, label, shared, bucket = row
    probability = max(p for p in (p_cit, p_cf) if p is not None) if has_reranker and p_cit is not None else None
    above = bool(label) if has_reranker else True
    return {"query_id": qid, "query_text": qtext, "source_id": sid, "source_text": stext, "similarity": score,
            "probability": probability, "above_threshold": "Yes" if above else "No", "rank": rank, "label": label,
            "p_cit": p_cit, "p_cf": p_cf, "shared_lemmas": shared, "overlap": bucket}


def results(run: DetectionRun, qs) -> list[dict]:
    return [_result(row, bool(run.reranker)) for row in selectors.export_rows(qs)]


def results_csv(run: DetectionRun, qs, *, mode: str = MACHINE) -> str:
    return csv_text(RESULT_HEADER, results(run, qs), mode=mode, float_format="{:.6f}")


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
    return csv_text(VERDICT_HEADER, verdicts(run), mode=mode, float_format="{:.6f}")
