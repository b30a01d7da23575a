"""Detection methods: every retriever, pair scorer and reranker, behind one registry.

>>> from detection.methods import registry
>>> r = registry.build("bm25-lemma", {"k1": 1.2, "b": 0.75})      # user parameters are validated
>>> r.fit(source_ids, source_texts).search(query_texts, k=100)   # -> TopK

``get_retriever`` is the same for platform code that also passes internal arguments (``cache_dir``,
``n_jobs``...): declared parameters are validated, internal ones passed through.
"""
from __future__ import annotations

from . import registry
from .registry import MethodSpec, Param, ParamError, UnknownMethod
from .retriever import Retriever, TopK


def split_params(spec: MethodSpec, params: dict) -> tuple[dict, dict]:
    """(user parameters, internal arguments) of ``params`` for ``spec``."""
    user = {k: v for k, v in params.items() if k not in spec.internal}
    internal = {k: v for k, v in params.items() if k in spec.internal}
    return user, internal


def build_configured(name: str, kind: str, params: dict) -> object:
    """``registry.build`` with the machine's build context (the lemma cache jobs use) for platform code that passes
    user parameters and internal arguments in one mapping."""
    user, internal = split_params(registry.get_spec(name), params)
    return registry.build(name, user, kind=kind, context=registry.BuildContext.default(), **internal)


def get_retriever(name: str, **params) -> Retriever:
    return build_configured(name, "retriever", params)


DEFAULT_RETRIEVER = "channels"  # the best measured first stage (docs/verse_detection.md): every entry point's default


def warm_default() -> None:
    """Run the default detector once on two tiny texts, explanations included (imports, lemma tables, word vectors,
    compiled kernels), so that a worker process pays its start here and not in a user's first detection
    (``JOB_WORKER_PRELOAD``; ``perf/first_detection.py`` measures it)."""
    texts = ["arma virumque cano Troiae qui primus ab oris", "Italiam fato profugus Laviniaque venit"]
    retriever = get_retriever(DEFAULT_RETRIEVER).fit(["a", "b"], texts)
    search = getattr(retriever, "search_explained", None)
    search(texts[:1], 2) if search else retriever.search(texts[:1], 2)


def params_for_unit(name: str, params: dict | None, unit: str) -> dict:
    """``params`` with the text type a method declares as ``profile`` taken from the search unit when not given:
    ``prose`` for sentences, ``verse`` for lines and windows of lines."""
    if params is not None and not isinstance(params, dict):
        return params  # refused by the registry's own check, with its message
    params = dict(params or {})
    declared = registry.get_spec(name).params if name in registry.names() else ()
    if "profile" not in params and any(p.name == "profile" for p in declared):
        params["profile"] = "prose" if unit == "sentence" else "verse"
    return params


def available() -> list[str]:
    """Names of the registered retrievers."""
    return sorted(registry.names(kind="retriever"))


__all__ = ["DEFAULT_RETRIEVER", "MethodSpec", "Param", "ParamError", "Retriever", "TopK", "UnknownMethod", "available",
           "build_configured", "get_retriever", "params_for_unit", "registry", "split_params"]
