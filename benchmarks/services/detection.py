"""Queue a (sharded) detection job: every query segment of one stored corpus against another corpus."""
from __future__ import annotations

from benchmarks.models import Corpus
from core.errors import DomainError
from jobs.models import Job
from jobs.services import job_create


class DetectionError(DomainError, ValueError):
    """A detection request that cannot be honoured (unknown corpus or method, bad parameters)."""


def detection_job_create(*, query_corpus: Corpus, source_corpus: Corpus, method: str, params: dict | None = None,
                         k: int = 100, shard_size: int | None = None, owner=None) -> Job:
    """Queue ``benchmarks.detect``: the top ``k`` sources of every query, in shards of ``shard_size`` queries
    (one shard when None) that the workers share.

    Args:
        method: a registered retriever; ``params`` are validated against what it declares.
        shard_size: queries per shard; every shard is a job any worker of the method's queue may run.
    """
    from benchmarks import selectors
    from benchmarks.detection_jobs import DETECT_KIND
    from detection.methods import registry

    try:
        params = registry.validate(method, params or {}, kind="retriever")
    except (registry.ParamError, registry.UnknownMethod) as exc:
        raise DetectionError(str(exc)) from None
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 10_000:
        raise DetectionError("k must be an integer between 1 and 10000")
    if shard_size is not None and (not isinstance(shard_size, int) or shard_size < 1):
        raise DetectionError("shard_size must be a positive integer")
    return job_create(kind=DETECT_KIND, owner=owner, queue=selectors.method_queue(method), params={
        "query_corpus_id": query_corpus.pk, "source_corpus_id": source_corpus.pk, "method": method,
        "params": params, "k": k, "shard_size": shard_size})
