"""Queue the one (sharded) detection job, ``benchmarks.detect``: every query segment of one segment set
(a stored corpus, or an app's registered set such as the workbench's documents) against another."""
from __future__ import annotations

from core.errors import DomainError, RunError
from core.run_limits import DETECTION_K, DETECTION_SHARD_SIZE, DETECTION_SHARDS, DETECTION_UNIT
from jobs.models import Job
from jobs.services import job_create


class DetectionError(DomainError, ValueError):
    """A detection request that cannot be honoured (no segments, a limit, a unit). A bad method or parameter is
    the registry's own ParamError."""


def detection_method_config(name: str, params, *, kind: str):
    """The registered method ``name`` of ``kind`` configured with ``params`` (``registry.configure``: the one
    validation, defaults filled in), or ``params`` itself when it is already a ``MethodConfig``. A supervised
    method must name a trained model: a detection has no labelled pairs to learn from."""
    from detection.methods import registry

    if isinstance(params, registry.MethodConfig):
        config = params
        if config.name != name or config.kind != kind:
            raise DetectionError(f"the configuration of {config.name!r} ({config.kind}) is not a {kind} {name!r}")
    else:
        config = registry.configure(name, params or {}, kind=kind)
    if registry.get_spec(name).supervised and "model" in config.params and config.params["model"] is None:
        raise DetectionError(f"{name!r} learns from labelled pairs, which a detection does not have: name a trained "
                             f"model in its parameters, e.g. {{\"model\": \"NAME\"}}")
    return config


def detection_queue(method: str, reranker: str = "") -> str:
    """"gpu" when the retriever or the reranker declares it needs one (``needs_gpu``), else "cpu"."""
    from detection.methods import registry

    return "gpu" if any(registry.get_spec(n).needs_gpu for n in (method, reranker) if n) else "cpu"


def check_params(params) -> dict:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise RunError("params must be a JSON object")
    return params


def method_config(method: str, params, *, kind: str):
    """The method configured with the user's parameters (``registry.configure``: defaults filled in, a frozen
    ``MethodConfig`` that services store as it is).

    Unknown keys, bad values and methods of another kind are the registry's ``ParamError`` naming the problem
    (a ``DomainError``: the API, the pages and the commands show its message as it is): nothing a user sends
    reaches a method unchecked (no paths, no internal arguments).
    """
    from detection.methods import registry

    return registry.configure(method, check_params(params), kind=kind)


def detection_job_create(*, method: str, params: dict | None = None, k: int = 100, query_corpus=None,
                         source_corpus=None, queries: dict | None = None, sources: dict | None = None,
                         reranker: str = "", reranker_params: dict | None = None, thresholds: dict | None = None,
                         min_score: float | None = None, candidates: bool = False, store: dict | None = None,
                         shards: int | None = None, shard_size: int | None = None, unit: str = "line",
                         owner=None) -> Job:
    """Queue ``benchmarks.detect``: the top ``k`` sources of every query, in shards the workers share.

    Args:
        method: a registered retriever; ``params`` are validated against what it declares (``registry.configure``),
            as are the optional ``reranker``'s ``reranker_params``; either may be a ``MethodConfig`` already
            configured by the caller (not validated twice). The job carries both as ``MethodConfig.to_json()``. The job goes to the "gpu" queue when either declares
            ``needs_gpu``.
        query_corpus, source_corpus: stored corpora (``benchmarks.models.Corpus``, the segment set ``corpus`` the
            benchmarks app registers); or ``queries``/``sources`` as
            ``detection.detection_jobs.segment_set(name, pk)`` for another registered segment set.
        candidates: also keep the candidate pairs (``min_score``, reranking labelled by ``thresholds``, lexical
            overlap); ``store``: ``{"name": ..., ...}`` of a registered result store that writes them.
        unit: search both segment lists as their segments (``line``), as sliding windows of 2 or 3 of them
            (``window-2``, ``window-3``) or as the sentences they hold (``sentence``: segments joined and cut after
            ``.``, ``!``, ``?``, ``;``); a candidate is reported on its units' first segments, its explanation lists
            every segment covered (a sentence pair once per pair of first segments, at its best rank).
        shards: split the queries into this many shards; else ``shard_size`` queries per shard; else
            ``settings.JOB_SHARD_QUERIES``. One shard runs inside the job itself.
    """
    from detection.detection_jobs import DETECT_KIND, segment_set

    queries = queries or (segment_set("corpus", query_corpus.pk) if query_corpus else None)
    sources = sources or (segment_set("corpus", source_corpus.pk) if source_corpus else None)
    if not queries or not sources:
        raise DetectionError("name the query and the source segments")
    config = detection_method_config(method, params, kind="retriever")
    if reranker_params and not reranker:
        raise DetectionError("reranker_params given without a reranker")
    rr_config = detection_method_config(reranker, reranker_params, kind="reranker") if reranker else None
    if rr_config is not None:  # a stored model needing first-stage signals this retriever does not give: refused
        from detection.methods import registry
        from detection.methods.rerank.rerankers import check_first_stage

        check_first_stage(rr_config.name, dict(rr_config.params), config.name, registry.get_spec(config.name).signals)
    DETECTION_K.check(k, DetectionError)  # the run limits declared once (core/run_limits.py)
    DETECTION_SHARDS.check(shards, DetectionError)
    DETECTION_SHARD_SIZE.check(shard_size, DetectionError)
    DETECTION_UNIT.check(unit, DetectionError)
    return job_create(kind=DETECT_KIND, owner=owner, queue=detection_queue(method, reranker), params={
        "queries": queries, "sources": sources, "method": config.to_json(), "k": k,
        "reranker": rr_config.to_json() if rr_config else None, "thresholds": thresholds, "min_score": min_score,
        "candidates": bool(candidates or store), "store": store, "shards": shards, "shard_size": shard_size,
        "unit": unit})
