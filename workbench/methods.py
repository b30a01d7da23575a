"""The methods a detection may use, read from the one registry (`detection.methods.registry`) by kind, so a
retriever or reranker registered anywhere appears here without a change. Their parameters are validated by
`benchmarks.services.detection.detection_method_params` when a run is created."""
from __future__ import annotations

from detection.methods import registry


def specs(kind: str) -> list[dict]:
    """Declarations of every registered method of `kind` ("retriever" or "reranker"), as dicts."""
    return [spec.as_dict() for spec in registry.specs(kind)]
