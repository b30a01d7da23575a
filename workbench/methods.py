"""The methods a detection may use, read from the one registry (`detection.methods.registry`) by kind, so a
retriever or reranker registered anywhere appears here without a change. Their parameters are validated once, by
`registry.configure` (through `detection.services.detection.detection_method_config`), when a run is created; the
models they name are checked against the installed ones by `detection.methods.infrastructure.installed.installed_config`."""
from __future__ import annotations

from detection.methods import DEFAULT_RETRIEVER as DEFAULT_RETRIEVER  # the form's and the API's default
from detection.methods import registry
from detection.methods.infrastructure.installed import (
    local_models as local_models,  # the form and GET methods/ list them
)


def specs(kind: str) -> list[dict]:
    """Declarations of every registered method of `kind` ("retriever" or "reranker"), as dicts."""
    return [spec.as_dict() for spec in registry.specs(kind)]


def changed_params(config) -> dict:
    """The parameters of a stored configuration (``MethodConfig``; None: no method) that differ from the method's
    declared defaults, every one for a method no longer registered: what a run page shows, folded."""
    if config is None:
        return {}
    try:
        defaults = registry.get_spec(config.name).defaults()
    except registry.UnknownMethod:
        defaults = {}
    return {k: v for k, v in config.params.items() if k not in defaults or defaults[k] != v}
