"""Reads for jobs. Listing reaps stale rows first, so a dead worker never shows as running."""
from django.db.models import QuerySet

from core.roles import has_role
from jobs.models import Job
from jobs.registry import get_kind
from jobs.services import job_reap_stale


def job_list(*, user) -> QuerySet[Job]:
    """Jobs a user may see: their own; staff see all."""
    job_reap_stale()
    qs = Job.objects.select_related("owner")
    if user.is_staff:
        return qs
    return qs.filter(owner=user)


def job_ahead(job: Job) -> int | None:
    """How many jobs of the job's queue (its lane; bulk: "cpu" or "gpu") were queued before it; None once it runs."""
    if job.status != Job.Status.QUEUED:
        return None
    return Job.objects.filter(queue=job.queue, status=Job.Status.QUEUED, pk__lt=job.pk).count()


def job_visible_to(*, job: Job, user) -> bool:
    """Owner and staff; whoever the job kind's `visible` rule admits (e.g. every reader of its project's results,
    but no one a private benchmark version is hidden from); researchers for a system job of a kind without one."""
    if user.is_staff or (job.owner_id is not None and job.owner_id == user.pk):
        return True
    try:
        kind = get_kind(job.kind)
    except KeyError:
        return False
    if kind.visible is not None:
        return bool(kind.visible(job, user))
    return job.owner_id is None and has_role(user, "researcher")


def job_cancellable_by(*, job: Job, user) -> bool:
    """Owner and staff; whoever the job kind's `manageable` rule admits (e.g. the leads of its project)."""
    if user.is_staff or (job.owner_id is not None and job.owner_id == user.pk):
        return True
    try:
        kind = get_kind(job.kind)
    except KeyError:
        return False
    return bool(kind.manageable and kind.manageable(job, user))
