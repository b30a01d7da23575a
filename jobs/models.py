import re

from django.conf import settings
from django.db import models
from django.db.models import Case, F, TextField, Value, When
from django.db.models.functions import Concat
from django.utils import timezone

_EXC_PREFIX = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Unavailable|Missing|Refused|Timeout|Exit|Interrupt): ")
_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?(?:[/\\][\w.+@-]+){2,}[/\\]?")


def error_sentence(error: str) -> str:
    """A job's error as a page shows it: its first paragraph only (the runner puts the traceback after a blank
    line), without the exception's class name (kept when the message is one word), every server path cut to its last part, starting with a
    capital and ending with a full stop. The full text stays in ``Job.error`` (the job page shows it to staff)."""
    text = (error or "").strip().split("\n\n", 1)[0].strip()
    if text.startswith("Traceback (most recent call last)"):  # a bare traceback: its last line says what failed
        text = text.splitlines()[-1].strip()
    bare = _EXC_PREFIX.sub("", text, count=1)
    text = bare if " " in bare.strip() else text  # "KeyError: 3" says more with its class name
    text = re.sub(r"^\[Errno \d+\] ", "", text)
    text = text.replace("…/", "")  # a path the runner already shortened (`runner.public_error`)
    text = _PATH.sub(lambda m: m.group(0).rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1], text)
    text = " ".join(text.split())
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def log_appended(line: str):
    """An update expression for ``Job.log``: the log as the database holds it with ``[HH:MM:SS] line`` appended
    (a newline between lines, none before the first). Every writer appends this way, so no writer's lines are
    lost to another's (an earlier delivery's, the reaper's, the plan's before a merge)."""
    text = TextField()
    entry = f"[{timezone.now().strftime('%H:%M:%S')}] {line}"
    return Case(When(log="", then=Value(entry, output_field=text)),
                default=Concat(F("log"), Value("\n" + entry, output_field=text), output_field=text), output_field=text)


class Job(models.Model):
    """One long computation: what was asked (kind, params), where it stands, and what came out."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    class Queue(models.TextChoices):
        """The Celery queue: the interactive lane (work a person waits for on a page: a worker slot is kept for it)
        or the bulk lane on "cpu" or "gpu" (corpus builds, benchmark runs and suites, training, large detections)."""

        INTERACTIVE = "interactive"
        CPU = "cpu"
        GPU = "gpu"

    kind = models.CharField(max_length=100, db_index=True)
    queue = models.CharField(max_length=12, choices=Queue.choices, default=Queue.CPU)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=500, blank=True)
    log = models.TextField(blank=True)
    error = models.TextField(blank=True)  # what the user reads: no traceback, no server paths (jobs.runner)
    error_detail = models.TextField(blank=True)  # the full traceback: the server log and staff only
    result = models.JSONField(null=True, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    celery_task_id = models.CharField(max_length=64, blank=True)
    # Delivery: when the job's message was last handed to the broker, and how many times. A queued job
    # no worker claimed within JOB_REDELIVER_AFTER seconds of its last send is sent again.
    enqueued = models.DateTimeField(null=True, blank=True)
    deliveries = models.PositiveSmallIntegerField(default=0)
    # Sharded jobs (jobs.sharding): a shard points at the job it is part of; index orders the merge.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="shards")
    shard_index = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat"])]

    def __str__(self) -> str:
        return f"Job {self.pk} {self.kind} ({self.status})"

    @property
    def error_message(self) -> str:
        """The error as a sentence for pages (`error_sentence`): no traceback, no server path."""
        return error_sentence(self.error)

    @property
    def lane(self) -> str:
        return "interactive" if self.queue == self.Queue.INTERACTIVE else "bulk"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def duration_seconds(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None
