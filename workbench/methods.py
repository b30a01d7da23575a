"""The methods a detection may use, read from the one registry (`detection.methods.registry`) by kind, so a
retriever or reranker registered anywhere appears here without a change. Their parameters are validated by
`benchmarks.services.detection.detection_method_params` when a run is created; the models they name are
checked here against the models directory (`model_parameters`)."""
from __future__ import annotations

from collections.abc import Mapping

from detection.methods import registry


def specs(kind: str) -> list[dict]:
    """Declarations of every registered method of `kind` ("retriever" or "reranker"), as dicts."""
    return [spec.as_dict() for spec in registry.specs(kind)]


def local_models() -> list[dict]:
    """The models in this installation's models directory: word-vector models with their language, unit and
    vocabulary (largest first within a language), then the other models by name."""
    from detection.methods import model_store
    from detection.methods.word_vectors import VectorsError, read_manifest

    vectors, others = [], []
    for name in model_store.list_local():
        try:
            m = read_manifest(model_store.models_dir() / name)
        except (VectorsError, OSError, ValueError):
            others.append({"name": name, "kind": "model"})
            continue
        vectors.append({"name": name, "kind": "word vectors", "language": m.get("language", "la"),
                        "unit": m.get("unit", "lemma"), "vocab_size": m.get("vocab_size")})
    vectors.sort(key=lambda v: (v["language"], -(v["vocab_size"] or 0), v["name"]))
    return vectors + others


class ModelMissing(ValueError):
    """A model parameter names a model this installation does not have (the message lists those it has)."""


def model_parameters(name: str, given: Mapping | None, validated: dict) -> tuple[dict, list[str]]:
    """``validated`` (the method's parameters with defaults filled in) with every model it names present here.

    A model the user named that is not in the models directory (and is not a hub id ``org/name``) is refused,
    naming the ones that are. A *default* word-vector model that is not here (the full ``la-lemma-cbow200`` is
    trained from The Latin Library and stays out of git) is replaced by the largest word-vector model of the
    same language that is here (on a fresh install: ``la-lemma-demo``, trained at demo load), with a note for the
    run page. Returns the parameters and the notes."""
    from detection.methods import model_store

    spec = registry.get_spec(name)
    given = given or {}
    models = local_models()
    out, notes = dict(validated), []
    for p in spec.params:
        value = out.get(p.name)
        if p.type != "model" or not isinstance(value, str) or "/" in value or model_store.local_path(value):
            continue
        vectors = [m for m in models if m["kind"] == "word vectors" and m["language"] in spec.languages]
        if p.name in given or p.default != value or not vectors:
            here = ", ".join(m["name"] for m in (vectors if p.default == value else models)) or "none"
            hint = "" if vectors or p.default != value else (
                " (`manage.py load_demo` trains small demo vectors; `manage.py train_embeddings` a full model)")
            raise ModelMissing(f"{name}: the model {value!r} (parameter {p.name!r}) is not in this installation's "
                               f"models directory; the models here: {here}{hint}")
        out[p.name] = vectors[0]["name"]
        notes.append(f"{name}: its default word vectors {value!r} are not in this installation, so this run uses "
                     f"{vectors[0]['name']!r} ({vectors[0]['vocab_size'] or '?'} words); train the full model with "
                     f"`manage.py train_embeddings --name {value} ...` for better results")
    return out, notes
