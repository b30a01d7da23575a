"""Job kinds of the annotation app, all in this one module (imported by `AnnotationConfig.ready`).

Each job takes a project id, loads the project and hands the work to the module that does it:
`annotation.analytics` (the full agreement and score report), `annotation.plan` (budget simulation,
`annotation.stats.pair_selection.compare_designs`), `annotation.batch_create` (a batch above
settings.SIMILIA_BATCH_JOB_PAIRS pairs, `annotation.services.projects`) and `annotation.stop_check` (the exact
draws behind an adaptive batch's stop rule, `annotation.services.adaptive_batches.stop_check`, enqueued by the
next-set request so that it never makes them itself).
"""
from __future__ import annotations

import numpy as np
from django.conf import settings

from annotation.analytics import analytics_store, project_report_parts
from annotation.models import Batch, BatchCandidate, Pair, Project
from annotation.services.adaptive_batches import STOP_JOB, StopRule, stop_check
from annotation.services.projects import batch_start, pairs_insert
from annotation.services.simulation import NO_GOLD_SD, calibrated_scale, noise_calibration
from annotation.stats.pair_selection import compare_designs, simulate_stop_rule
from jobs.registry import job_kind

SHARES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75)


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
    """The summary becomes the job's result; each batch's piece an AnalyticsBatchResult row."""
    from threadpoolctl import threadpool_limits

    project = Project.objects.get(pk=project_id)
    with threadpool_limits(1):  # small matrices: BLAS threads only contend with the batch threads
        summary, pieces = project_report_parts(project, n_boot=n_boot, progress=job.progress,
                                               workers=settings.ANALYTICS_WORKERS)
    analytics_store(job=job, project=project, pieces=pieces)
    job.log(f"{summary['n_judgements']} judgements, {summary['n_rows']} candidate rows in {len(pieces)} batch(es)")
    return summary


@job_kind(STOP_JOB, queue="cpu", description="Check an adaptive batch's stop rule on exact posterior draws.",
          visible=project_job_visible, manageable=project_job_manageable)
def stop_check_job(job, *, project_id: int, batch_id: int) -> dict:
    """The probability of the project's top-k stop rule on exact draws; the next-set path reads the result (the batch
    takes no new pairs once it reaches the rule's level)."""
    batch = Batch.objects.select_related("project").get(pk=batch_id, project_id=project_id)
    job.progress(0.1, "exact posterior draws")
    result = stop_check(batch)
    job.log(f"{result['judgements']} judgements; top-k rule's posterior probability "
            f"{result['p'] if result['p'] is not None else float('nan'):.3f}")
    return result


@job_kind("annotation.plan", queue="cpu", description="Simulate annotation budgets for a project.",
          visible=project_job_visible, manageable=project_job_manageable)
def plan_job(job, *, project_id: int, n_items: int = 99, strengths_sd: float = 1.5, shares=SHARES,
             n_annotators: int = 11, noise: float = 1.0, n_reps: int = 3, target: float = 0.95,
             stop_top_k: int = 10, stop_recall: float = 0.9, stop_margin: float = 0.5, stop_level: float = 0.95,
             stop_runs: int = 0) -> dict:
    """Planning by simulation (`pair_selection.compare_designs`, the service's own pair rule): the judgements each
    design needs for its ranking to reach Spearman ρ ≥ `target` with the true strengths; with `stop_runs` > 0 also
    where the top-k stop rule would stop an adaptive batch (on demand: it makes exact draws at every check)."""
    # Exhaustive, random and adaptive designs on the same simulated annotators (noise spread 0.5–1.5 × `noise`, as
    # the demo's simulation; strengths c · shape, the shape from the project's first batch with gold scores, else
    # N(0, SD²), c calibrated to the project's observed agreement, or the DBBE gold's: `noise_calibration`).
    job.progress(0.05, "comparing exhaustive, random and adaptive designs")
    project = Project.objects.get(pk=project_id)
    calibration = noise_calibration(project)
    shape, source = _planning_shape(project_id, n_items, strengths_sd)
    c = calibrated_scale(shape, calibration["agreement"], n_annotators)
    theta = c * shape
    scales = np.array([noise * (0.5 + k / max(n_annotators - 1, 1)) for k in range(n_annotators)])
    designs = compare_designs(theta, annotator_scales=scales, seeds=n_reps, target=target, shares=tuple(shares),
                              progress=lambda f, m: job.progress(0.05 + (0.9 if stop_runs else 0.95) * f, m))
    designs["strengths"] = f"{source} × {c:.2f}"
    designs["calibration"] = calibration["source"]
    rule = StopRule(min(stop_top_k, len(theta) - 1), stop_recall, stop_margin, stop_level)
    return {"target": target, "n_items": len(theta), "n_pairs": len(theta) * (len(theta) - 1) // 2,
            "designs": designs, "stop_rule": _simulate_stop_rule(job, rule, theta, scales, stop_runs) if stop_runs
            else None}


def _simulate_stop_rule(job, rule: StopRule, theta: np.ndarray, scales: np.ndarray, runs: int) -> dict:
    """The rule on `runs` simulated adaptive batches of the planning strengths (`simulate_stop_rule`, 200 exact draws a
    check): how many stopped, at what share of the pairs, and how many stops claimed what the truth denies."""
    out = []
    for seed in range(runs):
        job.progress(0.9 + 0.1 * seed / runs, f"stop rule: batch {seed + 1} of {runs}")
        out.append(simulate_stop_rule(theta, k=rule.k, recall=rule.recall, margin=rule.margin, level=rule.level,
                                      annotator_scales=scales, seed=seed))
    stops = [r for r in out if r["stopped_at"] is not None]
    shares = [r["judged_pairs"] / r["pairs"] for r in stops]
    return {"rule": rule.explain(), "settings": rule.as_list(), "runs": runs, "stopped": len(stops),
            "false_stops": sum(r["false_stop"] for r in stops),
            "share_median": float(np.median(shares)) if stops else None,
            "share_min": min(shares) if stops else None, "share_max": max(shares) if stops else None,
            "judgements_median": float(np.median([r["stopped_at"] for r in stops])) if stops else None}


def _planning_shape(project_id: int, n_items: int, strengths_sd: float) -> tuple[np.ndarray, str]:
    gold = list(BatchCandidate.objects.filter(batch__project_id=project_id, gold_score__isnull=False)
                .order_by("batch_id", "position").values_list("batch_id", "gold_score"))
    if gold:
        first = gold[0][0]
        scores = np.array([g for b, g in gold if b == first])
        return scores, f"gold scores of the project's first gold batch ({len(scores)} candidates)"
    sd = strengths_sd * NO_GOLD_SD / 1.5  # the form's SD is on the uncalibrated logit scale (θ = 6 · gold)
    return np.random.default_rng(0).normal(0, sd, n_items), f"N(0, {strengths_sd:g}²)/6, {n_items} candidates"


@job_kind("annotation.batch_create", queue="cpu", description="Create a large batch and its pairs.",
          visible=project_job_visible, manageable=project_job_manageable)
def batch_create_job(job, *, project_id: int, reference_id: str, candidate_ids: list[str], name: str,
                     pilot: bool = False, seed: int | None = None, gold_scores: dict | None = None) -> dict:
    """The batch row and its candidates are written first, closed (the scheduler serves no closed batch),
    then the pairs in chunks with progress, then the batch opens. If the job fails or is cancelled the
    half-made batch is deleted, so a retry with the same name works."""
    project = Project.objects.get(pk=project_id)
    job.progress(0.0, "checking the candidates")
    batch, verse_pks = batch_start(project=project, reference_id=reference_id, candidate_ids=candidate_ids, name=name,
                                   pilot=pilot, gold_scores=gold_scores, status=Batch.Status.CLOSED)
    try:
        n_pairs = pairs_insert(batch_id=batch.pk, verse_pks=verse_pks, seed=seed,
                               progress=lambda f, m: job.progress(0.02 + 0.96 * f, m))
    except BaseException:
        Pair.objects.filter(batch=batch).delete()
        batch.delete()
        raise
    Batch.objects.filter(pk=batch.pk).update(n_pairs=n_pairs, status=Batch.Status.OPEN)
    job.log(f"batch {name!r}: {len(verse_pks)} candidates, {n_pairs:,} pairs")
    return {"batch_id": batch.pk, "name": name, "n_candidates": len(verse_pks), "n_pairs": n_pairs}
