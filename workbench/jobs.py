"""The workbench's part of the one detection job (``benchmarks.detect``, sharded over the workers): its
documents as a segment set (``document``) and the store that writes a merged detection's candidates as rows
of its run (``workbench.candidates``)."""
from detection.detection_jobs import SegmentSet, register_result_store, register_segment_set
from workbench import selectors
from workbench.models import DetectionRun
from workbench.services import STORE, detection_run_store

register_segment_set("document", SegmentSet(selectors.document_rows, selectors.document_count,
                                             selectors.document_fingerprint))


@register_result_store(STORE)
def store_candidates(context, params: dict, candidates, merged: dict) -> dict:
    run = DetectionRun.objects.get(pk=params["store"]["run_id"])
    return detection_run_store(run=run, candidates=candidates, merged=merged, progress=context.progress,
                               log=context.log)

