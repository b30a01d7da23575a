"""The `annotation.batch_create` job: a batch above settings.SIMILIA_BATCH_JOB_PAIRS pairs.

The batch row and its candidates are written first, closed (the scheduler serves no closed batch),
then the pairs in chunks with progress, then the batch opens. If the job fails or is cancelled the
half-made batch is deleted, so a retry with the same name works.
"""
from __future__ import annotations

from annotation.analytics import project_job_manageable, project_job_visible
from annotation.models import Batch, Pair, Project
from annotation.services.projects import batch_start, pairs_insert
from jobs.registry import job_kind


@job_kind("annotation.batch_create", queue="cpu", description="Create a large batch and its pairs.",
          visible=project_job_visible, manageable=project_job_manageable)
def batch_create_job(job, *, project_id: int, reference_id: str, candidate_ids: list[str], name: str,
                     pilot: bool = False, seed: int | None = None, gold_scores: dict | None = None) -> dict:
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
