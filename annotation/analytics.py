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
    "bt_aware_strength", "rank_aware", "interval_note",
]

# The orientation the classic (paper-comparable) agreement figures use: label `winner_is_b` needs an
# order of the two candidates, and the analytics order is the candidates' batch position.
ORIENTATION_RULE = "a = the candidate with the lower position in its batch (the order candidates were added)"


@dataclass
class ProjectData:
    judgements: stats.Judgements
    batches: list[Batch]
    candidates: dict[int, list[BatchCandidate]]  # batch index -> candidates by position
    annotators: list[str]
    created: np.ndarray  # epoch seconds per judgement
    response_ms: np.ndarray | None = None  # per judgement, NaN when unknown


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
    # Attention checks (known-answer pairs, possibly with the reference as a candidate) are never scored.
    rows = Judgement.objects.filter(batch__in=batches, undone_at__isnull=True, pair__attention_answer__isnull=True)
    if annotator:
        rows = rows.filter(annotator__username=annotator)
    if since:
        rows = rows.filter(created__gte=since)
    if until:
        rows = rows.filter(created__lte=until)
    data = list(rows.order_by("id").values_list(
        "batch_id", "annotator__username", "pair__verse_a_id", "pair__verse_b_id", "chosen_id", "created",
        "response_ms"))
    annotators = sorted({r[1] for r in data})
    ann_index = {name: i for i, name in enumerate(annotators)}
    n = len(data)
    bidx = np.empty(n, np.int64)
    aidx = np.empty(n, np.int64)
    left = np.empty(n, np.int64)
    right = np.empty(n, np.int64)
    winner = np.empty(n, np.int64)
    created = np.empty(n, np.float64)
    response = np.full(n, np.nan)
    for k, (batch_id, name, va, vb, chosen, when, ms) in enumerate(data):
        bi = batch_index[batch_id]
        bidx[k], aidx[k] = bi, ann_index[name]
        left[k], right[k], winner[k] = position[(bi, va)], position[(bi, vb)], position[(bi, chosen)]
        created[k] = when.timestamp()
        if ms is not None:
            response[k] = ms
    sizes = [len(candidates[i]) for i in range(len(batches))]  # batches differ in size (e.g. 98 vs 99)
    n_items = max(sizes, default=0)
    j = stats.from_winner_ids(aidx, left, right, winner, n_items=max(n_items, 1), batch=bidx, timestamp=created,
                              n_annotators=max(len(annotators), 1), n_batches=max(len(batches), 1),
                              batch_items=sizes if batches else None)
    return ProjectData(judgements=j, batches=batches, candidates=candidates, annotators=annotators, created=created,
                       response_ms=response)


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


def score_rows(data: ProjectData, *, n_boot: int = 200, seed: int = 0, aware: dict | None = None) -> list[dict]:
    """Per batch and candidate: wins, comparisons, normalised score (wins / max wins in the batch,
    as the released STS gold), win share, Bradley–Terry strength (posterior mode) with a 95 % credible
    interval (Laplace posterior, see annotation/stats/bt_bayes.py) and rank.

    A candidate nobody compared has no normalised score, strength, interval or rank (None) and is
    left out of the ranking; with one judgement in a batch the intervals are None ("undefined").
    ``n_boot`` is kept for the API's signature: the posterior needs no resampling (it sets the number
    of posterior draws for rank intervals). ``aware``: ``{batch index: strengths}`` of the
    annotator-aware fit, added as ``bt_aware_strength``/``rank_aware``.
    """
    j = data.judgements
    rows: list[dict] = []
    if not data.batches:
        return rows
    seen = _annotators_per_candidate(j, len(data.batches))
    for bi, batch in enumerate(data.batches):
        cands = data.candidates[bi]
        n = len(cands)
        counts = j.count_matrix(batch=bi)[:n, :n] if len(j) else np.zeros((n, n))
        post = stats.bradley_terry_posterior(counts, n_draws=max(n_boot, 0), seed=seed)
        wins = counts.sum(axis=1)
        comparisons = wins + counts.sum(axis=0)
        top = wins.max() if n else 0
        aware_theta = (aware or {}).get(bi)
        aware_rank = np.zeros(n, np.int64)
        if aware_theta is not None:
            ok = np.flatnonzero(np.isfinite(aware_theta[:n]))
            aware_rank[ok] = (-aware_theta[ok]).argsort(kind="stable").argsort(kind="stable") + 1
        for pos, cand in enumerate(cands):
            compared = bool(comparisons[pos])
            rows.append({
                "batch": batch.name, "batch_id": batch.pk, "reference_id": batch.reference.verse_id,
                "reference_text": batch.reference.text,
                "candidate_id": cand.verse.verse_id, "candidate_text": cand.verse.text,
                "wins": int(wins[pos]), "comparisons": int(comparisons[pos]),
                "normalized_score": float(wins[pos] / top) if top and compared else None,
                "win_share": float(wins[pos] / comparisons[pos]) if compared else None,
                "bt_strength": float(post.strengths[pos]) if compared else None,
                "bt_low": float(post.lower[pos]), "bt_high": float(post.upper[pos]),
                "rank": int(post.rank[pos]) if compared else None,
                "n_annotators": int(seen[bi, pos]), "gold_score": cand.gold_score,
                "bt_aware_strength": float(aware_theta[pos]) if aware_theta is not None and compared else None,
                "rank_aware": int(aware_rank[pos]) if aware_rank[pos] else None,
                "interval_note": post.reason if compared else "never compared: no strength, rank or interval",
            })
    return json_safe(rows)


def annotator_aware_report(data: ProjectData) -> tuple[dict, dict]:
    """Annotator-aware Bradley–Terry: per-annotator reliability and how much each batch's ranking moves.

    Returns:
        ``(report, {batch index: aware strengths})``.
    """
    j = data.judgements
    if not len(j):
        return {"reliability": [], "shift": []}, {}
    fit = stats.annotator_aware_bt(j)
    strengths = {bi: fit.strengths[bi] for bi in range(len(data.batches))}
    shift = []
    for bi, batch in enumerate(data.batches):
        n = len(data.candidates[bi])
        if not n:
            continue
        plain = stats.bradley_terry_posterior(j.count_matrix(batch=bi)[:n, :n], n_draws=0).strengths
        row = stats.ranking_shift(plain, fit.strengths[bi][:n])
        if row["n"]:
            shift.append(dict(row, batch=batch.name))
    reliability = [{"annotator": name, "reliability": fit.reliability[k], "n_judgements": fit.n_judgements[k]}
                   for k, name in enumerate(data.annotators)]
    return json_safe({"reliability": reliability, "shift": shift, "iterations": fit.iterations,
                   "converged": fit.converged}), strengths


def attention_pass_rates(project: Project) -> dict[str, dict]:
    """Per annotator: attention checks answered and passed (chose the known answer)."""
    from django.db.models import Count, F, Q

    rows = (Judgement.objects.filter(batch__project=project, undone_at__isnull=True,
                                     pair__attention_answer__isnull=False)
            .values("annotator__username")
            .annotate(n=Count("id"), passed=Count("id", filter=Q(chosen_id=F("pair__attention_answer_id")))))
    return {r["annotator__username"]: {"n": r["n"], "passed": r["passed"]} for r in rows}


def per_annotator_report(data: ProjectData, triads: dict | None = None,
                         attention: dict[str, dict] | None = None) -> list[dict]:
    """One row per annotator: agreement with the others' majority, consistency (circular triads per
    complete triple over their batches), test–retest, median response time and the fast flag."""
    j = data.judgements
    if not len(j):
        return []
    majority = stats.agreement_with_majority(j)
    retest = stats.retest_agreement(j)
    times = stats.response_times(j.annotator, data.response_ms if data.response_ms is not None
                                 else np.full(len(j), np.nan), j.n_annotators)
    circ: dict[str, list[int]] = {}
    for row in (triads or {}).get("per_annotator", []):
        c = circ.setdefault(row["annotator"], [0, 0])
        c[0] += row.get("n_circular") or 0
        c[1] += row.get("n_complete_triples") or 0
    counts = np.bincount(j.annotator, minlength=j.n_annotators)
    rows = []
    for k, name in enumerate(data.annotators):
        c = circ.get(name, [0, 0])
        rows.append({
            "annotator": name, "n_judgements": int(counts[k]),
            "majority_agreement": majority[k]["agreement"], "majority_units": majority[k]["n_units"],
            "circular": c[0], "complete_triples": c[1], "circular_share": c[0] / c[1] if c[1] else None,
            "retest_n": retest[k]["n_repeated"], "retest_agreement": retest[k]["agreement"],
            "median_ms": times[k]["median_ms"], "fast_share": times[k]["fast_share"], "fast_flag": times[k]["flag"],
            "attention_n": (attention or {}).get(name, {}).get("n", 0),
            "attention_passed": (attention or {}).get(name, {}).get("passed", 0),
            "attention_rate": ((attention or {})[name]["passed"] / (attention or {})[name]["n"]
                               if (attention or {}).get(name, {}).get("n") else None),
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
        # Headline figures: invariant to which candidate is called "a" (docs/statistics.md).
        "symmetric": stats.orientation_invariant_agreement(table),
        # Paper-comparable classic coefficients below depend on this orientation rule.
        "orientation_rule": ORIENTATION_RULE,
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
        return {"times": [], "fleiss": [], "krippendorff": [], "fleiss_symmetric": [], "kendall_u": [], "progress": {}}
    t0, t1 = float(data.created.min()), float(data.created.max())
    cuts = np.linspace(t0, t1, points) if t1 > t0 else np.array([t1])
    out = {"times": [], "fleiss": [], "krippendorff": [], "fleiss_symmetric": [], "kendall_u": [],
           "progress": {name: [] for name in data.annotators}}
    for cut in cuts:
        mask = data.created <= cut + 1e-6
        sub = j.subset(mask)
        table = stats.label_table(sub)
        out["times"].append(cut)
        out["fleiss"].append(stats.fleiss_kappa_judgements(table).value)
        out["krippendorff"].append(stats.krippendorff_alpha_judgements(table).value)
        out["fleiss_symmetric"].append(stats.fleiss_kappa_symmetric(table).value)
        out["kendall_u"].append(stats.kendall_u(table).value)
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
    step(0.2, "annotator-aware Bradley–Terry")
    aware, aware_strengths = annotator_aware_report(data)
    step(0.35, f"scores for {len(data.batches)} batch(es)")
    rows = score_rows(data, n_boot=n_boot, aware=aware_strengths)
    step(0.6, "agreement")
    agreement = agreement_report(data)
    step(0.75, "circular triads")
    triads = triads_report(data)
    step(0.9, "timeline")
    return {
        "annotator_aware": aware,
        "per_annotator": per_annotator_report(data, triads, attention_pass_rates(project)),
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
