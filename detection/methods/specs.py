"""What a detection method declares: :class:`MethodSpec` (name, kind, languages, GPU, its user parameters as
:class:`Param` with types, ranges and defaults, its internal arguments and its components) and the errors a bad
value gets. Types only, no state: the registry (:mod:`detection.methods.registry`) holds the specs, and the
catalogs (``catalog*.py``) are plain lists of them, so neither a catalog nor a method module imports the registry.

Each entry (a :class:`MethodSpec`) declares what the platform needs to know without importing the method's
heavy dependencies:

- ``name`` (unique), ``kind``: ``retriever`` (ranks a source corpus for each query: ``fit``/``search``),
  ``pair_scorer`` (scores given pairs, e.g. the Greek verse-similarity methods) or ``reranker`` (rescores a
  retriever's candidates);
- ``languages`` (ISO 639 codes: ``la``, ``grc``), ``supervised`` (learns from training folds), ``needs_gpu``
  (its jobs go to the ``gpu`` queue);
- ``params``: every parameter a user may set, with type, range or choices and default (:class:`Param`).
  Anything else a user sends is refused with :class:`ParamError` naming the key. Parameters that only
  platform code may pass (a cache directory, a worker count, an in-memory model) are listed in ``internal``
  and can never come from user input: :func:`build` takes them as separate keyword arguments.

User parameters are data: a ``model`` parameter accepts a registered model name or a hub id (never a
filesystem path), resolved by :mod:`detection.methods.infrastructure.model_store` against the configured models directory.

No Django here: the Django side reads ``registry.specs()`` for the method pickers, the OpenAPI schema and job
routing (``spec.queue``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from core import safejson
from core.errors import DomainError

KINDS = ("retriever", "pair_scorer", "reranker")
PARAM_TYPES = ("int", "float", "bool", "str", "choice", "model", "object")

_STR_MAX = 200


class ParamError(DomainError, ValueError):
    """A user parameter that the method does not declare, or a value outside its declaration. The one error a
    bad method configuration gets everywhere: a ``DomainError`` (400), so the API's handler, the pages and the
    commands (``core.cli.user_errors``) show its message as it is; no service wraps it in an error of its own."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


class UnknownMethod(DomainError, KeyError):
    """A method name the registry does not hold (a ``DomainError``, 400, like :class:`ParamError`)."""

    def __str__(self) -> str:  # KeyError quotes its argument; say it plainly
        return str(self.args[0])


@dataclass(frozen=True)
class Param:
    """A user-settable parameter: ``type`` is one of :data:`PARAM_TYPES`.

    ``int``/``float`` accept numbers or strings of ASCII digits and are checked against ``min``/``max``;
    ``bool`` accepts true/false (also as strings and 0/1); ``choice`` one of ``choices``; ``str`` a short
    string without control characters; ``model`` a registered model name or hub id (see
    :func:`detection.methods.infrastructure.model_store.check_model_name`); ``object`` a JSON object checked by ``validator``.
    ``validator`` (optional) gets the coerced value and returns it (possibly normalised) or raises ValueError.
    """

    name: str
    type: str
    default: Any = None
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple = ()
    nullable: bool = False
    validator: Callable[[Any], Any] | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.type not in PARAM_TYPES:
            raise ValueError(f"parameter {self.name!r}: unknown type {self.type!r}")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"parameter {self.name!r}: a choice needs choices")

    def coerce(self, value: Any) -> Any:
        """The validated value, or ParamError naming this parameter."""
        try:
            return self._coerce(value)
        except ParamError:
            raise
        except (TypeError, ValueError) as exc:
            raise ParamError(f"parameter {self.name!r}: {exc}", self.name) from None

    def _coerce(self, value):
        if value is None:
            if self.nullable:
                return None
            raise ValueError("must not be null")
        t = self.type
        if t == "int":
            value = _as_int(value)
            self._check_range(value)
        elif t == "float":
            value = _as_float(value)
            self._check_range(value)
        elif t == "bool":
            value = _as_bool(value)
        elif t == "choice":
            if value not in self.choices:
                raise ValueError(f"must be one of {', '.join(map(str, self.choices))}, not {_short(value)}")
        elif t == "str":
            value = _as_str(value)
        elif t == "model":
            from .infrastructure.model_store import check_model_name

            value = check_model_name(_as_str(value))
        elif t == "object":
            if not isinstance(value, Mapping):
                raise ValueError("must be a JSON object")
            value = dict(value)
        if self.validator is not None:
            value = self.validator(value)
        return value

    def _check_range(self, value):
        if self.min is not None and value < self.min:
            raise ValueError(f"must be ≥ {self.min}, not {value}")
        if self.max is not None and value > self.max:
            raise ValueError(f"must be ≤ {self.max}, not {value}")

    def as_dict(self) -> dict:
        d = {"name": self.name, "type": self.type, "default": self.default, "help": self.help}
        if self.min is not None:
            d["min"] = self.min
        if self.max is not None:
            d["max"] = self.max
        if self.choices:
            d["choices"] = list(self.choices)
        if self.nullable:
            d["nullable"] = True
        return d


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_int(value) -> int:
    return safejson.whole_number(value)  # the one guarded reader of numbers (±(2**63 - 1), ASCII digits)


def _as_float(value) -> float:
    return safejson.real_number(value)  # finite, from an int within ±(2**63 - 1), a float or a short decimal


def _as_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise ValueError(f"must be true or false, not {_short(value)}")


def _as_str(value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, not {_short(value)}")
    if len(value) > _STR_MAX:
        raise ValueError(f"must be at most {_STR_MAX} characters")
    if any(ord(c) < 32 for c in value):
        raise ValueError("must not contain control characters")
    return value


@dataclass(frozen=True)
class MethodSpec:
    """A registered method. ``factory(**fixed, **validated_params, **internal_kwargs)`` builds an instance."""

    name: str
    kind: str
    factory: Callable[..., Any] = field(compare=False)
    description: str
    languages: tuple[str, ...] = ("la",)
    supervised: bool = False
    needs_gpu: bool = False
    params: tuple[Param, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    internal: tuple[str, ...] = ()
    # user parameters whose value names another registered method: the factory receives that method built
    # (with the internal arguments it declares), never its name (pyserini's HybridSearcher(dense, sparse))
    components: tuple[str, ...] = ()
    # cross-parameter checks: each gets the validated parameters (defaults filled in) and raises ParamError
    # (naming a key) for a combination the method cannot take, so it is refused where single values are
    checks: tuple[Callable[[Mapping[str, Any]], None], ...] = field(default=(), compare=False)
    # a retriever's per-candidate signals given with its candidates (``search_signals``; channels: each channel's
    # score and the context term): what a feature reranker stored with ``first_stage_features`` needs
    signals: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"method {self.name!r}: kind must be one of {KINDS}")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"method {self.name!r}: duplicate parameter names")
        clash = set(names) & (set(self.fixed) | set(self.internal))
        if clash:
            raise ValueError(f"method {self.name!r}: {sorted(clash)} both user and fixed/internal")
        if set(self.components) - set(names):
            raise ValueError(f"method {self.name!r}: components {sorted(set(self.components) - set(names))} "
                             "are not parameters")

    @property
    def queue(self) -> str:
        """The Celery queue its jobs go to."""
        return "gpu" if self.needs_gpu else "cpu"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def validate(self, params: Mapping[str, Any] | None) -> dict:
        """Declared parameters with defaults filled in; ParamError for unknown keys or bad values."""
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise ParamError(f"parameters of {self.name!r} must be a JSON object")
        declared = {p.name: p for p in self.params}
        for key in params:
            if key not in declared:
                allowed = ", ".join(declared) or "none"
                raise ParamError(f"unknown parameter {_short(key)} for method {self.name!r} (allowed: {allowed})",
                                 str(key))
        out = {}
        for name, p in declared.items():
            out[name] = p.coerce(params[name]) if name in params else p.default
        for check in self.checks:
            check(MappingProxyType(out))
        return out

    def configure(self, params: Mapping[str, Any] | None) -> MethodConfig:
        """This method with ``params`` validated (:meth:`validate`): the one place a :class:`MethodConfig` is made
        (``registry.configure`` calls it; :meth:`MethodConfig.from_json` reads back what one wrote)."""
        return MethodConfig(self.name, self.kind, self.validate(params), _CONFIGURED)

    def instantiate(self, validated: Mapping[str, Any], internal: Mapping[str, Any], context: BuildContext):
        """An instance from parameters already validated (a :class:`MethodConfig`'s): a declared parameter
        missing from them (added to the declaration since they were stored) takes its default, an undeclared one
        is refused. ``internal``: the trusted arguments; ``context`` builds the components."""
        unknown = set(internal) - set(self.internal)
        if unknown:
            raise TypeError(f"method {self.name!r} takes no internal argument {sorted(unknown)}")
        gone = set(validated) - {p.name for p in self.params}
        if gone:
            raise ParamError(f"stored parameters {sorted(gone)} of {self.name!r} are no longer declared: "
                             "configure the method again", sorted(gone)[0])
        kwargs = {**self.fixed, **self.defaults(), **validated, **internal}
        for key in self.components:  # another registered method, built with the same build context
            if _COMPONENT_BUILDER is None:
                raise RuntimeError(f"method {self.name!r} has components: build it through the registry")
            kwargs[key] = _COMPONENT_BUILDER(kwargs[key], context)
        instance = self.factory(**kwargs)
        try:
            instance.name = self.name
        except AttributeError:
            pass
        return instance

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "languages": list(self.languages),
            "supervised": self.supervised,
            "needs_gpu": self.needs_gpu,
            "queue": self.queue,
            "params": [p.as_dict() for p in self.params],
        }



_CONFIGURED = object()  # what MethodSpec.configure and MethodConfig.from_json hand the constructor


def config_digest(name: str, params: Mapping[str, Any]) -> str:
    """The sha256 of a method and its parameters as canonical JSON (any key order gives one digest)."""
    canonical = json.dumps({"name": name, "params": dict(params)}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def stored_json(name: str, kind: str, params: Mapping[str, Any]) -> dict:
    """For data migrations only: what a row or job stored before configurations existed (a method and the
    parameters it ran with, not validated again), in :meth:`MethodConfig.to_json`'s shape."""
    return {"name": name, "kind": kind, "params": dict(params), "digest": config_digest(name, params)}


@dataclass(frozen=True)
class MethodConfig:
    """A method and its validated parameters: what ``registry.configure`` returns, services store and jobs carry.
    ``params`` is read-only with every declared parameter (defaults filled in); ``digest`` names the pair (the
    sha256 of its canonical JSON), so two equal configurations have one digest whatever order the keys came in.
    Only :meth:`MethodSpec.configure` (behind ``registry.configure``) and :meth:`from_json` make one: built any
    other way it raises ``TypeError``."""

    name: str
    kind: str
    params: Mapping[str, Any]
    origin: InitVar[object] = None

    def __post_init__(self, origin):
        if origin is not _CONFIGURED:
            raise TypeError("a MethodConfig comes from registry.configure (or from_json of what one wrote), never "
                            "built directly")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def digest(self) -> str:
        return config_digest(self.name, self.params)

    def as_dict(self) -> dict:
        """What a row stores: ``{"name", "params"}`` (JSON)."""
        return {"name": self.name, "params": dict(self.params)}

    def to_json(self) -> dict:
        """The one serialisation a job carries: name, kind, parameters and digest (JSON-safe)."""
        return stored_json(self.name, self.kind, self.params)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MethodConfig:
        """The configuration :meth:`to_json` wrote, checked against its digest (a job's params edited on the
        way are refused, not built). Validation happened once, in ``registry.configure``."""
        if not isinstance(data, Mapping) or not {"name", "kind", "params", "digest"} <= set(data) \
                or not isinstance(data["params"], Mapping):
            raise ParamError("a method configuration must be a JSON object with name, kind, params and digest")
        config = cls(str(data["name"]), str(data["kind"]), dict(data["params"]), _CONFIGURED)
        if data["digest"] != config.digest:
            raise ParamError(f"the configuration of {config.name!r} does not match its digest")
        return config


@dataclass(frozen=True)
class BuildContext:
    """The platform's side of building a method, one value per process that builds: the lemma cache folder,
    the torch device and the worker count. It fills each internal argument a spec declares (``cache_dir``,
    ``device``, ``n_jobs`` and its alias ``workers``) and nothing else; in-memory objects shared between builds
    (a fitted featurizer, loaded vectors) are passed next to it. A composed method's parts get the same context."""

    cache_dir: str | None = None
    device: str | None = None
    n_jobs: int = 1

    @classmethod
    def default(cls, **overrides) -> BuildContext:
        """The lemma cache of this machine (``SIMILIA_CACHE_DIR``, else ``~/.cache/similia``), one job."""
        from detection.latin.lemmatize import default_cache_dir

        values = {"cache_dir": str(default_cache_dir()), **{k: v for k, v in overrides.items() if v is not None}}
        return cls(**values)

    def internal_for(self, spec: MethodSpec) -> dict:
        values = {"cache_dir": None if self.cache_dir is None else str(self.cache_dir), "device": self.device,
                  "n_jobs": self.n_jobs, "workers": self.n_jobs}
        return {k: v for k, v in values.items() if k in spec.internal and v is not None}


# Set by the registry when it loads (`registry._build_component`): builds a component method by name. The
# registry imports this module, never the reverse, so the hook is how a spec reaches it.
_COMPONENT_BUILDER: Callable[[str, BuildContext], Any] | None = None


class Catalog(list):
    """A plain list of specs. A catalog module fills one with ``register = CATALOG.add`` and
    ``register(MethodSpec(...))``; the registry reads the lists (``detection/methods/catalog.py``)."""

    def add(self, spec: MethodSpec) -> MethodSpec:
        self.append(spec)
        return spec
