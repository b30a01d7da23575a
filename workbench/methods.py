"""The methods a detection may use, read from the one registry (`detection.methods.registry`) by kind, so a
retriever or reranker registered anywhere appears here without a change. Until a reranker named
`lexical-rule` is registered, the benchmark's parameter-free lexical rule scorer is offered under that name."""
from __future__ import annotations

from detection.methods import registry

LEXICAL_RULE = "lexical-rule"


class MethodError(ValueError):
    pass


def _lexical_rule_spec() -> dict:
    return {"name": LEXICAL_RULE, "kind": "reranker", "languages": ["la"], "supervised": False, "needs_gpu": False,
            "queue": "cpu", "description": "lexical rule scorer: a retriever's cosine over the candidates, typed "
                                           "cit. where the §3.3 rule fires, else cf. (not a learned model)",
            "params": [{"name": "retriever", "type": "choice", "default": "tfidf-lemma", "help": "similarity used",
                        "choices": sorted(registry.names(kind="retriever"))}]}


def _builtin_lexical_rule() -> bool:
    return LEXICAL_RULE not in registry.names()


def specs(kind: str) -> list[dict]:
    """Declarations of every registered method of `kind` ("retriever" or "reranker"), as dicts."""
    out = [spec.as_dict() for spec in registry.specs(kind)]
    if kind == "reranker" and _builtin_lexical_rule():
        out.append(_lexical_rule_spec())
    return out


def validate(name: str, params, *, kind: str) -> dict:
    """Parameters checked against what the method declares (defaults filled in); MethodError otherwise."""
    if kind == "reranker" and name == LEXICAL_RULE and _builtin_lexical_rule():
        params = params or {}
        if not isinstance(params, dict) or set(params) - {"retriever"}:
            raise MethodError(f"unknown parameter for {LEXICAL_RULE!r} (allowed: retriever)")
        retriever = params.get("retriever", "tfidf-lemma")
        if retriever not in registry.names(kind="retriever"):
            raise MethodError(f"parameter 'retriever' must be a registered retriever, not {retriever!r}")
        return {"retriever": retriever}
    try:
        validated = registry.validate(name, params or {}, kind=kind)
    except (registry.ParamError, registry.UnknownMethod) as exc:
        raise MethodError(str(exc)) from None
    spec = registry.get_spec(name)
    if spec.supervised and "model" in validated and validated["model"] is None:
        # a detection has no training folds: a supervised method must name a trained model
        raise MethodError(f"{name!r} learns from labelled pairs, which a detection does not have: name a trained "
                          f"model in its parameters, e.g. {{\"model\": \"NAME\"}}")
    return validated


def queue(retriever: str, reranker: str = "") -> str:
    """"gpu" when the retriever or the reranker declares it needs one, else "cpu"."""
    names = [retriever] + ([reranker] if reranker and not (reranker == LEXICAL_RULE and _builtin_lexical_rule()) else [])
    return "gpu" if any(registry.get_spec(n).needs_gpu for n in names) else "cpu"


def build(name: str, params: dict):
    """An instance with validated parameters (platform arguments such as the lemma cache are added here)."""
    if name == LEXICAL_RULE and _builtin_lexical_rule():
        from benchmarks.loci.method_adapters import LexicalRuleScorer

        return LexicalRuleScorer(**params)
    spec = registry.get_spec(name)
    internal = {}
    if "cache_dir" in spec.internal:
        from detection.latin.lemmatize import default_cache_dir

        internal["cache_dir"] = str(default_cache_dir())
    return spec.build(params, **internal)
