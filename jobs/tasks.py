"""The single Celery task: it takes a Job id and hands it to the runner."""
from celery import shared_task
from django.db import close_old_connections

from jobs.lifecycle import worker_identity
from jobs.runner import run_job


@shared_task(name="jobs.run_job", ignore_result=True)
def run_job_task(job_id: int) -> str:
    close_old_connections()
    return run_job(job_id, worker=worker_identity(run_job_task.request.hostname))
