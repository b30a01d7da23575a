"""Job kinds: a name, a queue, and the function that does the work.

A job function takes the `JobContext` and the job's params as keyword arguments and returns a
JSON-serialisable dict, which becomes `Job.result`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from core.registries import Registry


@dataclass(frozen=True)
class JobKind:
    name: str
    queue: str
    func: Callable
    description: str
    visible: Callable | None = None  # (job, user) -> bool: who besides the owner and staff may see the job
    manageable: Callable | None = None  # (job, user) -> bool: who besides the owner and staff may cancel it


_KINDS: Registry[JobKind] = Registry("job kind")

#: The interactive lane, routed here by kind name (issue 45): what a person waits for on a page (the dashboard's
#: analytics, planning, an adaptive batch's stop check, a workbench detection) goes to the
#: "interactive" queue, which a worker slot is kept for, never behind a corpus build, a benchmark run or a training.
#: A detection that fans out into several shards sends them to the bulk lane (``jobs.sharding``): small ones stay here.
INTERACTIVE_KINDS = frozenset({"annotation.analytics", "annotation.plan", "annotation.stop_check", "benchmarks.detect"})


def time_limits(kind: str, queue: str) -> tuple[int, int]:
    """(soft, hard) seconds for a `kind` job on `queue`: settings.JOB_TIME_LIMITS for its kind, else its lane's
    (JOB_INTERACTIVE_TIME_LIMIT; the bulk lane: CELERY_TASK_SOFT_TIME_LIMIT), the hard limit 300 s after the soft."""
    from django.conf import settings

    lane = settings.JOB_INTERACTIVE_TIME_LIMIT if queue == "interactive" else settings.CELERY_TASK_SOFT_TIME_LIMIT
    soft = min(settings.JOB_TIME_LIMITS.get(kind, lane), settings.CELERY_TASK_SOFT_TIME_LIMIT)
    return soft, min(soft + 300, settings.CELERY_TASK_TIME_LIMIT)


def lane_queue(kind: str, queue: str) -> str:
    """The Celery queue of a `kind` job asked for on `queue`: "interactive" for an interactive kind's CPU work."""
    return "interactive" if queue == "cpu" and kind in INTERACTIVE_KINDS else queue


def job_kind(name: str, *, queue: str = "cpu", description: str = "", visible: Callable | None = None,
             manageable: Callable | None = None):
    """Decorator registering `func` as the job kind `name` on `queue` ("cpu" or "gpu"; `lane_queue` routes the
    interactive kinds' CPU work).

    `visible(job, user)` may widen who can read the job (e.g. every reader of the job's project's results);
    `manageable(job, user)` who may cancel it (e.g. the project's leads)."""
    if queue not in {"cpu", "gpu"}:
        raise ValueError(f"queue must be 'cpu' or 'gpu', not {queue!r}")

    def register(func: Callable) -> Callable:
        _KINDS.add(name, JobKind(name=name, queue=queue, func=func, description=description or (func.__doc__ or ""),
                                 visible=visible, manageable=manageable))
        return func

    return register


def get_kind(name: str) -> JobKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"Unknown job kind {name!r}; known: {', '.join(sorted(_KINDS)) or 'none'}") from None


def all_kinds() -> dict[str, JobKind]:
    return dict(_KINDS)
