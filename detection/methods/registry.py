"""The one registry of detection methods: everything that ranks or scores text pairs.

What a method declares (name, kind, languages, GPU, user parameters with types, ranges and defaults, internal
arguments, components) is a :class:`~detection.methods.specs.MethodSpec`; this module holds the registered
specs. When it loads it registers the catalogs' plain lists (``catalog.py``, which adds ``catalog_rerank.py``
and ``catalog_semantic.py``); nothing it imports imports it back (``.importlinter``). :func:`validate` checks
a user's parameters against the declaration (:class:`ParamError` naming the key); :func:`build` makes an
instance through :func:`build_config`, the one build path, building a composed method's components first.

No Django here: the Django side reads :func:`specs` for the method pickers, the OpenAPI schema and job
routing (``spec.queue``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping

from core.registries import Registry

from . import specs as _specs
from .catalog import CATALOG
from .specs import (  # noqa: F401  (the types, re-exported: callers import them from here)
    KINDS,
    PARAM_TYPES,
    BuildContext,
    Catalog,
    MethodConfig,
    MethodSpec,
    Param,
    ParamError,
    UnknownMethod,
    _short,
)

_REGISTRY: Registry[MethodSpec] = Registry("method")


def register(spec: MethodSpec) -> MethodSpec:
    return _REGISTRY.add(spec.name, spec)


def unregister(name: str) -> None:
    """Remove an entry (tests that add a toy method clean up with this)."""
    _REGISTRY.pop(name, None)


def get_spec(name: str) -> MethodSpec:
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownMethod(f"unknown method {_short(name)}; available: {', '.join(sorted(_REGISTRY))}") from None


def specs(kind: str | None = None, language: str | None = None) -> list[MethodSpec]:
    """Registered methods, in registration order, optionally of one kind and/or language."""
    return [s for s in _REGISTRY.values()
            if (kind is None or s.kind == kind) and (language is None or language in s.languages)]


def names(kind: str | None = None, language: str | None = None) -> list[str]:
    return [s.name for s in specs(kind, language)]


def configure(name: str, params: Mapping[str, Any] | None, *, kind: str | Iterable[str] | None = None
              ) -> MethodConfig:
    """The one validation of a method and its user parameters: a frozen :class:`MethodConfig` (name, kind,
    validated parameters with defaults, digest). ``UnknownMethod`` for a name not registered, ``ParamError``
    (naming the key) for a method of another kind, an undeclared key or a bad value; every entry point (pages,
    API, commands, jobs) gets the same message for the same value."""
    spec = get_spec(name)
    if kind is not None:
        kinds = (kind,) if isinstance(kind, str) else tuple(kind)
        if spec.kind not in kinds:
            raise ParamError(f"method {name!r} is a {spec.kind}, not a {' or '.join(kinds)}")
    return spec.configure(params)


def validate(name: str, params: Mapping[str, Any] | None, *, kind: str | Iterable[str] | None = None) -> dict:
    """``configure(...)``'s validated parameters as a plain dict."""
    return dict(configure(name, params, kind=kind).params)


def carried_config(value: Any, *, kind: str) -> MethodConfig:
    """The configuration a job carries, as its worker reads it: ``MethodConfig.to_json()`` read back with its
    digest checked (``MethodConfig.from_json``) and held to ``kind``, not validated again. (Rows queued before
    jobs carried configurations were converted once by the data migration ``detection/0003_mcfg_job_configurations``.)"""
    config = MethodConfig.from_json(value)
    if config.kind != kind:
        raise ParamError(f"the job carries the configuration of a {config.kind} ({config.name!r}) where a {kind} "
                         "belongs")
    return config


def build(name: str, params: Mapping[str, Any] | None = None, *, kind: str | None = None,
          context: BuildContext | None = None, **internal):
    """:func:`configure` then :func:`build_config`, the one build path. ``context``: platform code passes the
    machine's (``BuildContext.default()``, the lemma cache jobs use); without one nothing is cached (tests,
    scripts). ``internal`` arguments that are the context's (``cache_dir``, ``device``, ``n_jobs`` or ``workers``)
    replace its values, the others (shared objects) are handed over as they are."""
    fields = {k: internal.pop(k) for k in ("cache_dir", "device", "n_jobs") if k in internal}
    if "workers" in internal:
        fields.setdefault("n_jobs", internal.pop("workers"))
    context = replace(context or BuildContext(), **{k: v for k, v in fields.items() if v is not None})
    return build_config(configure(name, params, kind=kind), context, **internal)


def build_config(config: MethodConfig, context: BuildContext | None = None, **shared):
    """The one way platform code builds a configured method: ``config`` (from :func:`configure`, or a job's
    ``MethodConfig.from_json``) is not validated again; ``context`` (default :meth:`BuildContext.default`)
    fills the internal arguments the method declares; ``shared`` are in-memory objects it declares too (a
    fitted featurizer). A composed method's parts are built with the same context and handed over built."""
    spec = get_spec(config.name)
    if spec.kind != config.kind:
        raise ParamError(f"method {config.name!r} is a {spec.kind}, not a {config.kind}")
    context = context or BuildContext.default()
    return spec.instantiate(config.params, {**context.internal_for(spec), **shared}, context)


def format_specs(kind: str | None = None, language: str | None = None) -> str:
    """The registry as text, for ``--method list`` in every command: name, kind, languages, GPU, description
    and each parameter with its type, range and default."""
    lines = []
    for spec in specs(kind, language):
        flags = f"{spec.kind}, {'/'.join(spec.languages)}" + (", GPU" if spec.needs_gpu else "") + (
            ", supervised" if spec.supervised else "")
        lines.append(f"{spec.name:<28} {spec.description} ({flags})")
        for p in spec.params:
            bounds = (f" in [{p.min:g}, {p.max:g}]" if p.min is not None and p.max is not None
                      else f" one of {', '.join(map(str, p.choices))}" if p.choices else "")
            lines.append(f"{'':<30}--param {p.name}=…  {p.type}{bounds}, default {p.default!r}")
    return "\n".join(lines) + "\n"


def _build_component(name: str, context: BuildContext):
    """A composed method's part (hybrid's lexical retriever): built by name with its defaults and the build
    context of the method it is part of."""
    spec = get_spec(name)
    return spec.instantiate(spec.defaults(), context.internal_for(spec), context)


for _spec in CATALOG:
    register(_spec)
_specs._COMPONENT_BUILDER = _build_component
