"""Jobs that fan out over several workers: one parent Job, N shard Jobs, one merge.

A sharded kind is registered with ``@sharded_job_kind(name, plan=..., merge=...)`` on its shard function.
That registers two job kinds: ``name``, whose function fans out, and ``name + ".shard"``, the shard function.

- **Fan out.** The parent's function asks ``plan(params)`` for the shards (e.g. ranges of queries,
  :func:`query_ranges`), creates one Job row per shard (``parent``, ``shard_index``, the parent's params plus
  the shard's) and sends them to the broker as one Celery ``group`` after commit. It returns ``FanOut``: the
  runner leaves the parent *running*; from then on the shards keep it alive (their heartbeats beat the
  parent's too). A plan of one shard runs that shard and the merge inside the parent (no second job).
- **Progress** of the parent is the mean of its shards' progress, written with each shard progress report.
- **Join.** Celery's chord would need a result backend; this project keeps none (the Job rows are the
  record). So the join is in the database: each shard that finishes looks at its siblings, and the one
  that sees them all succeeded runs ``merge(context, params, shard_results_in_order)`` and finishes the
  parent. The merge is claimed first by a conditional update (the parent's ``progress_message`` becomes
  "merging …"), so were two shards to finish at once only one merges (a merge that stores rows runs once),
  and a heartbeat keeps the parent alive while it runs. A failed shard fails the parent and cancels the
  shards not yet done.
- **A lost shard** (its worker killed: no heartbeat for ``JOB_HEARTBEAT_TIMEOUT``) is put back in the queue
  and sent again by the reaper every worker runs (``jobs.services.job_reap_stale``), up to
  ``JOB_SHARD_ATTEMPTS`` deliveries; the shards already done are kept, not redone.
- Cancelling the parent cancels its shards (``jobs.services.job_cancel``).

Shard functions should load what every shard needs (an index, embeddings) once per worker process and keep
it (see ``detection.detection_jobs``): a worker that runs several shards of the same job pays for it once.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.registries import Registry
from jobs.dispatch import send, send_group
from jobs.lifecycle import Heartbeat, JobContext, finish, sum_progress
from jobs.models import Job, log_appended
from jobs.registry import job_kind

logger = logging.getLogger(__name__)

SHARD_SUFFIX = ".shard"
Status = Job.Status


@dataclass(frozen=True)
class FanOut:
    """Returned by a parent's function: the work continues in ``shards`` shard jobs."""

    shards: int


@dataclass(frozen=True)
class ShardedKind:
    name: str
    plan: Callable[..., list[dict]]
    merge: Callable
    queue: str
    shard: Callable


#: The parent's progress message while one shard merges (the claim that keeps a second one from merging).
MERGING = "merging"


def query_ranges(n: int, *, shards: int | None = None, shard_size: int | None = None) -> list[dict]:
    """``[{"start": a, "stop": b}, ...]`` covering rows ``0..n-1`` in order: ``shards`` near-equal ranges
    when given, else ranges of ``shard_size`` rows, else ranges of ``settings.JOB_SHARD_QUERIES``."""
    if n <= 0:
        return []
    if shards:
        size = -(-n // min(int(shards), n))
    else:
        size = max(1, int(shard_size or settings.JOB_SHARD_QUERIES))
    return [{"start": a, "stop": min(a + size, n)} for a in range(0, n, size)]


def shard_slot(context) -> tuple[int, int]:
    """``(parent job id, shard index)`` of a shard function's context; ``(the job's own id, 0)`` when the
    plan had one shard and it runs inside its parent. Shards name their part files with it."""
    if context.parent_id:
        return context.parent_id, context.job.shard_index
    return context.id, 0


#: Test-only: seconds a shard sleeps after loading and before its work. Unset in every real deployment.
PAUSE_IN_SHARD_ENV = "SIMILIA_TEST_PAUSE_IN_SHARD"


def pause_in_shard(context) -> None:
    """Test-only: hold the shard (running, heartbeat on) for ``$SIMILIA_TEST_PAUSE_IN_SHARD`` seconds, so a
    test can kill its worker there or make shards long enough that every worker takes some."""
    import os
    import time

    pause = os.environ.get(PAUSE_IN_SHARD_ENV)
    if pause:
        context.log(f"{PAUSE_IN_SHARD_ENV}={pause}: pausing in the shard")
        time.sleep(float(pause))


_SHARDED: Registry[ShardedKind] = Registry("sharded job kind")


def sharded_job_kind(name: str, *, plan: Callable[..., list[dict]], merge: Callable, queue: str = "cpu",
                     description: str = "", visible: Callable | None = None, manageable: Callable | None = None):
    """Register the decorated shard function as ``name + ".shard"`` and a fan-out parent kind ``name``.

    ``plan(params, log) -> [shard params, ...]`` (each merged over the parent's params for one shard; ``log``
    is the parent's, for a plan that loads or fits);
    ``merge(context, params, results) -> dict`` gets the shards' results in shard order and returns the
    parent's result. ``context`` is the parent's ``JobContext`` (log, progress)."""

    def register(shard_func: Callable) -> Callable:
        _SHARDED.add(name, ShardedKind(name=name, plan=plan, merge=merge, queue=queue, shard=shard_func))

        def fan_out(job, **params):
            return _fan_out(job, _SHARDED[name], params)

        fan_out.__doc__ = description
        job_kind(name, queue=queue, description=description, visible=visible, manageable=manageable)(fan_out)
        job_kind(name + SHARD_SUFFIX, queue=queue, description=f"One shard of {name}.", visible=visible,
                 manageable=manageable)(shard_func)
        return shard_func

    return register


def _fan_out(context, spec: ShardedKind, params: dict) -> FanOut | dict:
    shards = spec.plan(dict(params), log=context.log)
    if not shards:
        raise ValueError(f"{spec.name}: nothing to do (the plan has no shards)")
    if len(shards) == 1:  # nothing to share: the shard and the merge run here, in the parent
        context.log("one shard: running it in this job")
        return spec.merge(context, params, [spec.shard(context, **{**params, **shards[0]})])
    queue = context.job.queue if context.job.queue != Job.Queue.INTERACTIVE else spec.queue  # many shards: bulk
    with transaction.atomic():
        rows = [Job(kind=spec.name + SHARD_SUFFIX, params={**params, **shard}, owner_id=context.owner_id,
                    queue=queue, parent_id=context.id, shard_index=i) for i, shard in enumerate(shards)]
        Job.objects.bulk_create(rows)
        ids = list(Job.objects.filter(parent_id=context.id).order_by("shard_index").values_list("pk", flat=True))
        transaction.on_commit(lambda: _send_group(ids, queue, spec.name + SHARD_SUFFIX))
    context.log(f"fanned out into {len(ids)} shards (jobs {ids[0]}–{ids[-1]}) on queue {queue!r}")
    Job.objects.filter(pk=context.id).update(progress_message=f"0 of {len(ids)} shards done")
    return FanOut(len(ids))


def _send_group(ids: list[int], queue: str, kind: str) -> None:
    """Send every shard's message as one Celery group; on a broker failure fail the shards (and the parent)."""
    try:
        send_group(ids, queue, kind)
    except Exception as exc:
        logger.exception("could not send shards %s", ids)
        Job.objects.filter(pk__in=ids, status=Status.QUEUED).update(
            status=Status.FAILED, finished=timezone.now(),
            error=f"Could not send the shard to the task broker ({type(exc).__name__}: {exc}).")
        parent_id = Job.objects.filter(pk=ids[0]).values_list("parent_id", flat=True).first()
        if parent_id:
            shard_settled(parent_id)


def shard_settled(parent_id: int) -> None:
    """Called when a shard reached a final state: fail, progress or merge the parent."""
    parent = Job.objects.filter(pk=parent_id).first()
    if parent is None or parent.status != Status.RUNNING:
        return
    shards = list(Job.objects.filter(parent_id=parent_id).order_by("shard_index").values(
        "pk", "shard_index", "status", "error", "result"))
    bad = next((s for s in shards if s["status"] in (Status.FAILED, Status.CANCELLED)), None)
    if bad is not None:
        reason = bad["error"] or bad["status"]
        if finish(parent_id, status=Status.FAILED, error=f"Shard {bad['shard_index']} (job {bad['pk']}) "
                                                          f"{bad['status']}: {reason}"):
            Job.objects.filter(parent_id=parent_id, status__in=[Status.QUEUED, Status.RUNNING]).update(
                status=Status.CANCELLED, finished=timezone.now(), progress_message="cancelled: a sibling shard failed")
        return
    done = sum(s["status"] == Status.SUCCEEDED for s in shards)
    if done < len(shards):
        sum_progress(parent_id, f"{done} of {len(shards)} shards done")
        return
    claimed = Job.objects.filter(pk=parent_id, status=Status.RUNNING).exclude(
        progress_message__startswith=MERGING).update(progress_message=f"{MERGING} {len(shards)} shards")
    if not claimed:  # another shard is merging (or the parent finished meanwhile)
        return
    _merge(parent, [s["result"] for s in shards])


def _merge(parent: Job, results: list) -> None:
    """Run the kind's merge with the parent's context (its progress messages start with "merging") and a
    heartbeat for the parent, then finish the parent with the result or the error."""
    class MergeContext(JobContext):
        def progress(self, fraction: float, message: str = "") -> None:
            super().progress(fraction, f"{MERGING}: {message}" if message else MERGING)

    context = MergeContext(parent)  # its log lines follow the plan's and the shards' notes
    heartbeat = Heartbeat(parent.pk, settings.JOB_HEARTBEAT_INTERVAL)
    heartbeat.start()
    try:
        result = _SHARDED[parent.kind].merge(context, parent.params, results)
    except Exception as exc:
        logger.exception("merging the shards of job %s failed", parent.pk)
        finish(parent.pk, status=Status.FAILED, error=f"Merging the shards failed: {type(exc).__name__}: {exc}")
        return
    finally:
        heartbeat.stop()
    elapsed = (timezone.now() - parent.started).total_seconds() if parent.started else 0.0
    finish(parent.pk, status=Status.SUCCEEDED, result=result, progress=1.0,
           progress_message=f"done in {elapsed:.1f} s over {len(results)} shards")


def shard_retry_lost(job: Job, message: str) -> bool:
    """Put a shard whose worker was lost back in the queue and send it again; False once attempts ran out."""
    if job.deliveries >= settings.JOB_SHARD_ATTEMPTS:
        return False
    requeued = Job.objects.filter(pk=job.pk, status=Status.RUNNING).update(
        status=Status.QUEUED, started=None, heartbeat=None, progress=0.0, worker="",
        progress_message="re-queued: its worker was lost",
        log=log_appended(f"{message} Sent again (delivery {job.deliveries + 1})."))
    if requeued:
        logger.warning("shard job %s lost its worker: sending it again", job.pk)
        send(job)
    return bool(requeued)
