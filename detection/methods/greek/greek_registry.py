"""The Greek verse-similarity methods (pair scorers) through the one registry.

``get_method(name, **params)`` validates declared parameters (unknown keys and bad values raise ParamError)
and passes the method's internal arguments through; ``available()`` lists the Greek pair scorers.
"""
from __future__ import annotations

from .. import build_configured, registry
from .greek_similarity import SimilarityMethod


def available() -> list[str]:
    """Names of the registered Greek pair scorers, in registration order."""
    return registry.names(kind="pair_scorer", language="grc")


def method_specs() -> list[dict]:
    """Declaration of each Greek method (name, description, parameters), plus its defaults and whether it needs
    a model."""
    out = []
    for spec in registry.specs(kind="pair_scorer", language="grc"):
        d = spec.as_dict()
        d["defaults"] = spec.defaults()
        d["needs_model"] = any(p.type == "model" for p in spec.params)
        out.append(d)
    return out


def get_method(name: str, **params) -> SimilarityMethod:
    return build_configured(name, "pair_scorer", params)
