"""The rerankers and what each declares (see :mod:`detection.methods.registry`); imported by ``catalog.py``.

All are ``kind="reranker"``: they rescore a retriever's candidates with class probabilities for (no match,
``cit.``, ``cf.``) and label them with per-class thresholds tuned on the training folds
(:mod:`detection.methods.rerank`). ``model`` names a trained model in the models directory.
"""
from __future__ import annotations

from .specs import Catalog, MethodSpec, Param

CATALOG = Catalog()  # a plain list: the registry reads it through catalog.py
register = CATALOG.add

LATIN = ("la",)
_MODEL = Param("model", "model", None, "a trained model in the models directory (null: train on the training folds)",
               nullable=True)
_TOL = Param("tol", "float", 0.01, "plateau tolerance of the threshold heuristic (F1 within tol of the best)",
             min=0.0, max=0.5)


def _word_vector_model(name):
    """A registered Latin word-vector model's name, or ValueError naming the ones there are."""
    from .infrastructure import model_store
    from .semantic.word_vectors import VectorsError, list_vector_models, read_manifest

    folder = model_store.local_path(name)
    if folder is None or not folder.is_dir():
        raise ValueError(f"no word-vector model {name!r} in the models directory (registered: "
                         f"{', '.join(list_vector_models()) or 'none'}; train one with `manage.py train_embeddings`)")
    try:
        manifest = read_manifest(folder)
    except VectorsError as exc:
        raise ValueError(str(exc)) from None
    if manifest.get("language", "la") != "la":
        raise ValueError(f"word-vector model {name!r} holds {manifest.get('language')!r} vectors, not Latin")
    return name


_VECTORS = Param("vectors", "model", None, "a word-vector model (`manage.py train_embeddings`): adds the SIF "
                 "embedding cosine of the pair to the features (null: no embedding feature)", nullable=True,
                 validator=_word_vector_model)
_FEATURES = (Param("rare_df", "int", 50, "a shared lemma is rare when at most this many source segments hold it",
                   min=1, max=1_000_000),
             Param("gap", "int", 3, "ordered shared pairs: at most this many content words apart", min=1, max=20),
             _TOL, Param("seed", "int", 0, "random seed", min=0, max=2**31 - 1), _VECTORS,
             Param("first_stage_features", "bool", True, "add the first stage's own per-candidate signals to the "
                   "features when it gives them (channels: each channel's score and the context term)"))


def _feature(classifier):
    def factory(**kw):
        from .rerank.rerankers import FeatureReranker

        return FeatureReranker(classifier=classifier, **kw)

    return factory


def _lexical_rule(**kw):
    from .rerank.rerankers import LexicalRuleReranker

    return LexicalRuleReranker(**kw)


def _cross_encoder(**kw):
    from .rerank.rerankers import CrossEncoderReranker

    return CrossEncoderReranker(**kw)


register(MethodSpec(
    "feature-logreg", "reranker", _feature("feature-logreg"),
    "Logistic regression on per-pair lexical, positional and sound features (runs anywhere in seconds)",
    languages=LATIN, supervised=True,
    params=(_MODEL, Param("C", "float", 1.0, "inverse regularisation strength", min=1e-4, max=1e4)) + _FEATURES,
    internal=("cache_dir", "featurizer")))
register(MethodSpec(
    "feature-hgb", "reranker", _feature("feature-hgb"),
    "Histogram gradient boosting on the same per-pair features (stored with skops, trusted types only)",
    languages=LATIN, supervised=True,
    params=(_MODEL, Param("max_iter", "int", 200, "boosting iterations", min=1, max=5000),
            Param("learning_rate", "float", 0.1, "shrinkage", min=1e-4, max=1.0)) + _FEATURES,
    internal=("cache_dir", "featurizer")))
register(MethodSpec(
    "feature-ltr", "reranker", _feature("feature-ltr"),
    "Learning to rank: a linear model trained on pairwise differences of the same per-pair features inside each "
    "query (logistic loss), Platt-scaled to the 3-class output; stored as JSON",
    languages=LATIN, supervised=True,
    params=(_MODEL, Param("C", "float", 1.0, "inverse regularisation strength", min=1e-4, max=1e4),
            Param("max_negatives", "int", 50, "negatives paired with each positive of a query (hard ones first)",
                  min=1, max=1000),
            Param("query_norm", "bool", True, "features as z-scores among the same query's candidates (chosen by "
                  "measurement: it transfers across benchmarks, docs/benchmark_suite.md)"),
            Param("anchor", "bool", False, "the first stage's score keeps an unpenalised weight: the ranker starts "
                  "from the first stage's order and C pulls the other weights towards it"),
            Param("monotone", "bool", False, "the weights of the first stage's own evidence (its score, 1/rank, each "
                  "channel's score) stay >= 0: a better channel score never lowers a candidate"),
            Param("train_depth", "int", None, "pair only the candidates within this first-stage rank in training "
                  "(null: every candidate)", min=1, max=1000, nullable=True)) + _FEATURES,
    internal=("cache_dir", "featurizer")))
register(MethodSpec(
    "lexical-rule", "reranker", _lexical_rule,
    "No training: TF-IDF lemma cosine, typed cit. by the §3.3 proximity rule, else cf.",
    languages=LATIN, params=(Param("gap", "int", 3, "the rule's window in content words", min=1, max=20), _TOL),
    internal=("cache_dir", "featurizer")))
register(MethodSpec(
    "cross-encoder", "reranker", _cross_encoder,
    "A fine-tuned 3-class cross-encoder (no match / cit. / cf.); train one with a training job",
    languages=LATIN, supervised=True, needs_gpu=True,
    params=(Param("model", "model", None, "a trained cross-encoder in the models directory"),
            Param("batch_size", "int", 64, "pairs per forward pass", min=1, max=4096),
            Param("max_length", "int", 256, "token budget of a pair (half for each side)", min=16, max=4096),
            Param("device", "choice", "auto", "where to run (auto: CUDA when present)",
                  choices=("auto", "cpu", "cuda")))))
