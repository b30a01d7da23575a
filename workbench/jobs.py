"""The workbench's job kind: it takes a detection run id and hands the run to its service."""
from jobs.registry import job_kind
from workbench.models import DetectionRun
from workbench.services import DETECT_KIND, detection_run_execute


@job_kind(DETECT_KIND, queue="cpu", description="Detect parallels between two documents (retrieve, rerank).")
def detect(job, *, run_id: int) -> dict:
    run = DetectionRun.objects.get(pk=run_id)
    return detection_run_execute(run=run, progress=job.progress, log=job.log)
