"""The jobs' one index cache: ``VAR_DIR/index-cache`` bounded by ``INDEX_CACHE_MAX_BYTES``
(``detection.methods.infrastructure.index_cache``). A sharded evaluation's plan and shards (``benchmarks.services.
evaluation_shards``) and a detection's plan and shards (``detection.detection_jobs``) get their fitted pool
index through :func:`fit_or_load`, so a second job, shard or worker over the same corpus and parameters loads it."""
from __future__ import annotations

import os
import time
from pathlib import Path

from django.conf import settings

from detection.methods.infrastructure.index_cache import IndexCache, config_cache_key


def pool_index_cache() -> IndexCache:
    return IndexCache(Path(settings.VAR_DIR) / "index-cache", settings.INDEX_CACHE_MAX_BYTES)


def fit_or_load(target, config, source_ids, source_texts, *, log=None) -> tuple[str, str, float]:
    """``target`` (a retriever or evaluation method, not fitted, built from ``config``, the ``MethodConfig`` a
    run stored or a job carried) fitted on the sources: loaded from the cache when an earlier job stored it, else
    fitted here and stored; the key is the configuration's digest with the sources' content.
    ``(key, "cache" | "built", seconds)``."""
    t = time.perf_counter()
    method = config.name
    key = config_cache_key(config, source_ids, source_texts)
    how = pool_index_cache().fit_or_load(target, key, lambda: target.fit(list(source_ids), list(source_texts)))
    took = time.perf_counter() - t
    if log:
        what = "loaded the cached" if how == "cache" else "fitted"
        log(f"pid {os.getpid()}: {what} {method} index {key[:12]} ({len(source_ids)} sources) in {took:.2f} s")
    return key, how, took


def index_counts(results: list[dict]) -> dict:
    """How a sharded job's pool index was made ready, from its shards' results: fitted (``index_builds``) or
    loaded from the cache (``index_cache_loads``), by the plan (each shard's ``parent_index``, the same in all)
    and by each shard whose process did not hold it yet (its ``index``: "built" or "cache"; any other value, such
    as "memory" or "per fold", counts as neither); ``index_loads``: both together."""
    how = [r.get("index") for r in results]
    how.append(next((r["parent_index"] for r in results if r.get("parent_index")), None))
    builds, cache_loads = how.count("built"), how.count("cache")
    return {"index_builds": builds, "index_cache_loads": cache_loads, "index_loads": builds + cache_loads}


def load_cached(target, key: str) -> bool:
    """``target`` made the fitted index cached under ``key`` (a shard told the key by its plan); False on a miss."""
    return pool_index_cache().load(key, target)
