"""What this installation has for the methods' model parameters (pure: no Django).

A method declares its model parameters in the registry; a default there (``la-lemma-cbow200``) is a model
trained outside git. `model_parameters` makes every default run anyway: a default word-vector model that is
not installed gives way to the largest installed one of the method's language (after ``make run``: the demo's
``la-lemma-demo``), with a note saying so; a model the user names that is not installed is refused up front
(`ModelMissing`, a `ParamError`) naming those that are. Used by the workbench and the ``detect`` command.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..registry import MethodConfig, ParamError, configure, get_spec
from . import model_store


class ModelMissing(ParamError):
    """A model parameter names a model this installation does not have (the message lists those it has)."""


def local_models() -> list[dict]:
    """The models this installation has, in the models directory or shipped in ``data/vectors/``: word-vector
    models with their language, unit and vocabulary (largest first within a language), then the other models
    by name."""
    from ..semantic.word_vectors import VectorsError, read_manifest

    vectors, others = [], []
    local = model_store.list_local()
    shipped = sorted(m.parent.name for m in model_store.SHIPPED_DIR.glob("*/manifest.json")
                     if m.parent.name not in local)
    for name, folder in [(n, model_store.models_dir() / n) for n in local] + [
            (n, model_store.SHIPPED_DIR / n) for n in shipped]:
        try:
            m = read_manifest(folder)
        except (VectorsError, OSError, ValueError):
            others.append({"name": name, "kind": "model"})
            continue
        vectors.append({"name": name, "kind": "word vectors", "language": m.get("language", "la"),
                        "unit": m.get("unit", "lemma"), "vocab_size": m.get("vocab_size"),
                        "shipped": name in shipped})
    vectors.sort(key=lambda v: (v["language"], -(v["vocab_size"] or 0), v["name"]))
    return vectors + others


def model_parameters(name: str, given: Mapping | None, validated: dict) -> tuple[dict, list[str]]:
    """``validated`` (method ``name``'s parameters with its defaults filled in) with every model it names
    installed, and the notes of what was changed.

    A model named in ``given`` (the user's parameters) that is neither in the models directory nor a hub id
    (``org/name``) raises `ModelMissing`. A declared default that is not installed is replaced by the largest
    installed word-vector model of the method's language; with none installed, `ModelMissing` says how to get
    one."""
    spec = get_spec(name)
    given = given or {}
    models = local_models()
    out, notes = dict(validated), []
    for p in spec.params:
        value = out.get(p.name)
        if p.type != "model" or not isinstance(value, str) or "/" in value or model_store.local_path(value) \
                or model_store.shipped_path(value):
            continue
        default = p.name not in given and p.default == value
        vectors = [m for m in models if m["kind"] == "word vectors" and m["language"] in spec.languages]
        if not default or not vectors:
            word_vectors = p.default is not None  # the parameter's declared default is a word-vector model
            here = ", ".join(m["name"] for m in (vectors if word_vectors else models)) or "none"
            hint = "" if vectors or not word_vectors else (
                " (`manage.py load_demo` trains small demo vectors; `manage.py train_embeddings` a full model)")
            raise ModelMissing(f"{name}: the model {value!r} (parameter {p.name!r}) is not in this installation's "
                               f"models directory; the models here: {here}{hint}", p.name)
        out[p.name] = vectors[0]["name"]
        notes.append(f"{name}: its default word vectors {value!r} are not in this installation, so this run uses "
                     f"{vectors[0]['name']!r} ({vectors[0]['vocab_size'] or 0:,} words); train the full model with "
                     f"`manage.py train_embeddings --name {value} ...` for better results")
    return out, notes


def installed_config(config: MethodConfig, given: Mapping | None) -> tuple[MethodConfig, list[str]]:
    """:func:`model_parameters` on a configuration: the same configuration with every model it names
    installed (a new digest when a default gave way), and the notes."""
    params, notes = model_parameters(config.name, given, dict(config.params))
    return (config if params == dict(config.params) else configure(config.name, params, kind=config.kind)), notes
