"""The workbench's part of the one detection job (``benchmarks.detect``, sharded over the workers): its
documents as a segment set (``document``) and the store that writes a merged detection's candidates as rows
of its run (``workbench.candidates``); and re-ranking a run with its owner's verdicts (``workbench.refit``)."""
from detection.detection_jobs import SegmentSet, register_result_store, register_segment_set
from jobs.registry import job_kind
from workbench import selectors
from workbench.models import DetectionRun
from workbench.services import REFIT_JOB, STORE, detection_run_store, run_refit

register_segment_set("document", SegmentSet(selectors.document_rows, selectors.document_count,
                                             selectors.document_fingerprint))


@register_result_store(STORE)
def store_candidates(context, params: dict, candidates, merged: dict) -> dict:
    run = DetectionRun.objects.get(pk=params["store"]["run_id"])
    return detection_run_store(run=run, candidates=candidates, merged=merged, progress=context.progress,
                               log=context.log)


@job_kind(REFIT_JOB, description="Re-rank a workbench run with its owner's verdicts (channel weights fitted on them).")
def refit_run(context, *, run_id: int, user_id: int) -> dict:
    from django.contrib.auth import get_user_model

    run = DetectionRun.objects.get(pk=run_id)
    return run_refit(run=run, user=get_user_model().objects.get(pk=user_id), progress=context.progress)
