"""Turning a project's judgements into agreement, consistency and similarity scores.

Loads live judgements into the array form of `annotation.stats` (items = candidate positions in
their batch, winners by candidate, never by screen side) and assembles JSON-ready reports for the
lead dashboard, the export API and `manage.py export_scores`. The heavy full report runs as the
`annotation.analytics` job; the dashboard shows its last result and when it was computed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.utils import timezone

from annotation import stats
from annotation.models import Batch, BatchCandidate, Judgement, Project
from core.numeric import json_safe
from jobs.registry import job_kind

SCORE_COLUMNS = [
    "batch", "batch_id", "reference_id", "reference_text", "candidate_id", "candidate_text", "wins", "comparisons",
    "normalized_score", "win_share", "bt_strength", "bt_low", "bt_high", "rank", "n_annotators", "gold_score",
]


@dataclass
class ProjectData:
    judgements: stats.Judgements
    batches: list[Batch]
    candidates: dict[int, list[BatchCandidate]]  # batch index -> candidates by position
    annotators: list[str]
    created: np.ndarray  # epoch seconds per judgement


def load_project_data(project: Project, *, batch_ids: list[int] | None = None, annotator: str | None = None,
                      since=None, until=None) -> ProjectData:
    """Live judgements of a project (optionally filtered) in array form."""
    batches = list(Batch.objects.filter(project=project).select_related("reference").order_by("id"))
    if batch_ids is not None:
        batches = [b for b in batches if b.pk in set(batch_ids)]
    batch_index = {b.pk: i for i, b in enumerate(batches)}
    candidates: dict[int, list[BatchCandidate]] = {i: [] for i in range(len(batches))}
    position: dict[tuple[int, int], int] = {}
    for cand in BatchCandidate.objects.filter(batch__in=batches).select_related("verse").order_by("batch_id", "position"):
        bi = batch_index[cand.batch_id]
        position[(bi, cand.verse_id)] = len(candidates[bi])
        candidates[bi].append(cand)
    rows = Judgement.objects.filter(batch__in=batches, undone_at__isnull=True)
    if annotator:
        rows = rows.filter(annotator__username=annotator)
    if since:
        rows = rows.filter(created__gte=since)
    if until:
        rows = rows.filter(created__lte=until)
    data = list(rows.order_by("id").values_list(
        "batch_id", "annotator__username", "pair__verse_a_id", "pair__verse_b_id", "chosen_id", "created"))
    annotators = sorted({r[1] for r in data})
    ann_index = {name: i for i, name in enumerate(annotators)}
    n = len(data)
    bidx = np.empty(n, np.int64)
    aidx = np.empty(n, np.int64)
    left = np.empty(n, np.int64)
    right = np.empty(n, np.int64)
    winner = np.empty(n, np.int64)
    created = np.empty(n, np.float64)
    for k, (batch_id, name, va, vb, chosen, when) in enumerate(data):
        bi = batch_index[batch_id]
        bidx[k], aidx[k] = bi, ann_index[name]
        left[k], right[k], winner[k] = position[(bi, va)], position[(bi, vb)], position[(bi, chosen)]
        created[k] = when.timestamp()
    n_items = max((len(c) for c in candidates.values()), default=0)
    j = stats.from_winner_ids(aidx, left, right, winner, n_items=max(n_items, 1), batch=bidx, timestamp=created,
                              n_annotators=max(len(annotators), 1), n_batches=max(len(batches), 1))
    return ProjectData(judgements=j, batches=batches, candidates=candidates, annotators=annotators, created=created)


def _annotators_per_candidate(j: stats.Judgements, n_batches: int) -> np.ndarray:
    """Distinct annotators who judged a pair involving each candidate, per batch (n_batches × n_items)."""
    if not len(j):
        return np.zeros((n_batches, j.n_items), dtype=np.int64)
    m = j.n_annotators
    both = np.unique(np.concatenate([(j.batch * j.n_items + j.a) * m + j.annotator,
                                     (j.batch * j.n_items + j.b) * m + j.annotator]))
    exact = np.zeros(n_batches * j.n_items, dtype=np.int64)
    np.add.at(exact, both // m, 1)
    return exact.reshape(n_batches, j.n_items)


def score_rows(data: ProjectData, *, n_boot: int = 200, seed: int = 0) -> list[dict]:
    """Per batch and candidate: wins, comparisons, normalised score (wins / max wins in the batch,
    as the released STS gold), win share, Bradley–Terry strength with a bootstrap interval."""
    j = data.judgements
    rows: list[dict] = []
    if not data.batches:
        return rows
    seen = _annotators_per_candidate(j, len(data.batches))
    for bi, batch in enumerate(data.batches):
        cands = data.candidates[bi]
        n = len(cands)
        counts = j.count_matrix(batch=bi)[:n, :n] if len(j) else np.zeros((n, n))
        boot = stats.bootstrap_bradley_terry(counts, n_boot=n_boot, seed=seed)
        wins = counts.sum(axis=1)
        comparisons = wins + counts.sum(axis=0)
        top = wins.max() if n else 0
        order = np.argsort(-boot.strengths, kind="stable")
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(1, n + 1)
        for pos, cand in enumerate(cands):
            rows.append({
                "batch": batch.name, "batch_id": batch.pk, "reference_id": batch.reference.verse_id, "reference_text": batch.reference.text,
                "candidate_id": cand.verse.verse_id, "candidate_text": cand.verse.text,
                "wins": int(wins[pos]), "comparisons": int(comparisons[pos]),
                "normalized_score": float(wins[pos] / top) if top else None,
                "win_share": float(wins[pos] / comparisons[pos]) if comparisons[pos] else None,
                "bt_strength": float(boot.strengths[pos]) if comparisons.sum() else None,
                "bt_low": float(boot.lower[pos]), "bt_high": float(boot.upper[pos]), "rank": int(rank[pos]),
                "n_annotators": int(seen[bi, pos]), "gold_score": cand.gold_score,
            })
    return json_safe(rows)


def agreement_report(data: ProjectData) -> dict:
    j = data.judgements
    if not len(j):
        return {"annotators": data.annotators, "n_judgements": 0}
    table = stats.label_table(j)
    kappa = stats.cohen_kappa_matrix(table)
    fleiss = stats.fleiss_kappa_judgements(table)
    alpha = stats.krippendorff_alpha_judgements(table)
    return json_safe({
        "annotators": data.annotators,
        "n_judgements": len(j),
        "cohen": {"kappa": kappa.kappa, "n_shared": kappa.n_shared, "mean": kappa.mean},
        "fleiss": fleiss.as_dict(),
        "krippendorff": alpha.as_dict(),
        "retest": [dict(row, annotator=data.annotators[row["annotator"]]) if "annotator" in row else row
                   for row in stats.retest_agreement(j)],
        "split_half": [dict(row, batch=data.batches[row["batch"]].name) for row in stats.split_half_reliability(j)],
    })


def _triad_texts(data: ProjectData, bi: int, triads) -> list[list[str]]:
    cands = data.candidates[bi]
    return [[cands[int(i)].verse.verse_id + " — " + cands[int(i)].verse.text for i in triple] for triple in triads]


def triads_report(data: ProjectData, *, list_cap: int = 20) -> dict:
    j = data.judgements
    if not len(j):
        return {"per_annotator": [], "majority": []}
    per = []
    for row in stats.triads_per_annotator(j, list_cap=list_cap):
        bi = row.pop("batch")
        row["batch"] = data.batches[bi].name
        row["annotator"] = data.annotators[row["annotator"]]
        row["triads"] = _triad_texts(data, bi, row.get("triads", []))
        per.append(row)
    majority = []
    for row in stats.majority_triads(j, list_cap=list_cap):
        bi = row.pop("batch")
        row["batch"] = data.batches[bi].name
        row["triads"] = _triad_texts(data, bi, row.get("triads", []))
        majority.append(row)
    return json_safe({"per_annotator": per, "majority": majority})


def timeline(data: ProjectData, *, points: int = 12) -> dict:
    """Cumulative agreement and per-annotator progress at `points` moments between first and last judgement."""
    j = data.judgements
    if not len(j):
        return {"times": [], "fleiss": [], "krippendorff": [], "progress": {}}
    t0, t1 = float(data.created.min()), float(data.created.max())
    cuts = np.linspace(t0, t1, points) if t1 > t0 else np.array([t1])
    out = {"times": [], "fleiss": [], "krippendorff": [], "progress": {name: [] for name in data.annotators}}
    for cut in cuts:
        mask = data.created <= cut + 1e-6
        sub = j.subset(mask)
        table = stats.label_table(sub)
        out["times"].append(cut)
        out["fleiss"].append(stats.fleiss_kappa_judgements(table).value)
        out["krippendorff"].append(stats.krippendorff_alpha_judgements(table).value)
        counts = np.bincount(sub.annotator, minlength=len(data.annotators))
        for k, name in enumerate(data.annotators):
            out["progress"][name].append(int(counts[k]))
    return json_safe(out)


def directionality(rows: list[dict]) -> list[dict]:
    """A→B vs B→A for every two batch references that are candidates of each other's batches: our
    normalised scores (None until that batch has judgements) beside the imported gold's."""
    ours = {(r["reference_id"], r["candidate_id"]): r["normalized_score"] for r in rows}
    gold = {(r["reference_id"], r["candidate_id"]): r["gold_score"] for r in rows}
    references = sorted({r["reference_id"] for r in rows})
    result = []
    for i, a in enumerate(references):
        for b in references[i + 1:]:
            if (a, b) not in ours and (b, a) not in ours:
                continue
            result.append({"a": a, "b": b, "a_to_b": ours.get((a, b)), "b_to_a": ours.get((b, a)),
                           "gold_a_to_b": gold.get((a, b)), "gold_b_to_a": gold.get((b, a))})
    return json_safe(result)


def project_report(project: Project, *, n_boot: int = 200, progress=None) -> dict:
    """Everything the lead dashboard shows, JSON-ready."""
    step = progress or (lambda fraction, message: None)
    step(0.05, "loading judgements")
    data = load_project_data(project)
    step(0.25, f"scores for {len(data.batches)} batch(es)")
    rows = score_rows(data, n_boot=n_boot)
    step(0.6, "agreement")
    agreement = agreement_report(data)
    step(0.75, "circular triads")
    triads = triads_report(data)
    step(0.9, "timeline")
    return {
        "project": project.name,
        "computed_at": timezone.now().isoformat(),
        "n_judgements": len(data.judgements),
        "scores": rows,
        "agreement": agreement,
        "triads": triads,
        "timeline": timeline(data),
        "directionality": directionality(rows),
        "n_boot": n_boot,
    }


def project_job_visible(job, user) -> bool:
    """Jobs about a project are readable by everyone who may read the project's results."""
    from annotation.selectors import user_can_view_results

    project = Project.objects.filter(pk=(job.params or {}).get("project_id")).first()
    return project is not None and user_can_view_results(project=project, user=user)


def project_job_manageable(job, user) -> bool:
    """Jobs about a project can be cancelled by the project's leads."""
    from annotation.selectors import user_can_manage

    project = Project.objects.filter(pk=(job.params or {}).get("project_id")).first()
    return project is not None and user_can_manage(project=project, user=user)


@job_kind("annotation.analytics", queue="cpu", description="Recompute a project's agreement and scores.",
          visible=project_job_visible, manageable=project_job_manageable)
def analytics_job(job, *, project_id: int, n_boot: int = 200) -> dict:
    project = Project.objects.get(pk=project_id)
    report = project_report(project, n_boot=n_boot, progress=job.progress)
    job.log(f"{report['n_judgements']} judgements, {len(report['scores'])} candidate rows")
    return report
