"""The built-in methods and what each declares (see :mod:`detection.methods.specs`): ``CATALOG``, a plain
list of specs that :mod:`detection.methods.registry` registers when it loads. This module never imports the
registry (no cycle: registry → catalogs → specs).

To add a method: write its class (a retriever with ``fit``/``search``, a pair scorer with
``fit``/``similarity_matrix``, or a reranker), then add a ``register(MethodSpec(...))`` here (or in a catalog
module of its own, whose ``CATALOG`` is added below) declaring every user-settable parameter.
``docs/ARCHITECTURE.md`` has the recipe.
"""
from __future__ import annotations

from detection.greek.preprocess import GreekPreprocessor

from .specs import Catalog, MethodSpec, Param

CATALOG = Catalog()
register = CATALOG.add

LATIN = ("la",)
GREEK = ("grc",)

# ------------------------------------------------------------------------------------------ Latin retrievers
_LEXICAL_INTERNAL = ("cache_dir", "n_jobs", "block_size")
_STOPWORDS = Param("stopwords", "bool", True, "drop the Latin stopword list before indexing")
_K1 = Param("k1", "float", 1.5, "BM25 term-frequency saturation", min=0.0, max=10.0)
_B = Param("b", "float", 0.75, "BM25 length normalisation", min=0.0, max=1.0)
_MAX_FEATURES = Param("max_features", "int", 50_000, "keep the most frequent terms only (null: all)",
                      min=1, max=10_000_000, nullable=True)


def _bm25(**kw):
    from .lexical.sparse import BM25Retriever

    return BM25Retriever(**kw)


def _tfidf(**kw):
    from .lexical.sparse import TfidfRetriever

    return TfidfRetriever(**kw)


def _tesserae(**kw):
    from .lexical.tesserae import TesseraeRetriever

    return TesseraeRetriever(**kw)


def _w2v_bigram(**kw):
    from .semantic.w2v_bigram import W2VBigramRetriever

    return W2VBigramRetriever(**kw)


for _kind in ("lemma", "surface"):
    register(MethodSpec(
        f"bm25-{_kind}", "retriever", _bm25,
        f"Okapi BM25 over {_kind}s (stopwords removed by default)",
        languages=LATIN, params=(_K1, _B, _STOPWORDS), fixed={"kind": _kind}, internal=_LEXICAL_INTERNAL))
for _name, _kind, _ngram in (("tfidf-lemma", "lemma", 1), ("tfidf-surface", "surface", 1),
                             ("tfidf-lemma-12", "lemma", 2)):
    register(MethodSpec(
        _name, "retriever", _tfidf,
        f"TF-IDF cosine over {_kind} {'1+2-grams' if _ngram == 2 else '1-grams'}",
        languages=LATIN, params=(_MAX_FEATURES, _STOPWORDS), fixed={"kind": _kind, "ngram": _ngram},
        internal=_LEXICAL_INTERNAL))
register(MethodSpec(
    "tesserae", "retriever", _tesserae,
    "Tesserae score (Forstall et al. 2014): ≥ 2 shared lemmas, inverse frequencies, distance penalty",
    languages=LATIN,
    params=(Param("stop_top", "int", 10, "the most frequent lemmas ignored as stopwords", min=0, max=1000),),
    internal=_LEXICAL_INTERNAL))
register(MethodSpec(
    "w2v-bigram", "retriever", _w2v_bigram,
    "Word2Vec bigram similarity (Burns et al. 2021): each query bigram matched to the source's best bigram; "
    "corpus-trained vectors by name, or vectors trained on the fitted texts",
    languages=LATIN,
    params=(Param("vectors", "model", None, "a word-vector model from `manage.py train_embeddings` (null: train "
                  "on the fitted texts)", nullable=True),
            Param("match", "choice", "bigram", "match each query bigram (Burns et al.), or average over whole "
                  "lines (older variant)", choices=("bigram", "lines")),
            Param("vector_size", "int", 100, "dimension of the word vectors", min=4, max=1024),
            Param("window", "int", 5, "context window", min=1, max=50),
            Param("min_count", "int", 2, "ignore rarer lemmas", min=1, max=10_000),
            Param("epochs", "int", 5, "training epochs", min=1, max=200),
            Param("seed", "int", 42, "random seed", min=0, max=2**31 - 1)),
    internal=("cache_dir", "block_size", "workers", "model_path", "word_vectors")))



def _channels(**kw):
    from detection.channels.pairwise import MultiChannelRetriever

    return MultiChannelRetriever(**kw)


def _channel_params():
    from detection.channels.channel_features import CHANNELS

    out = [Param("profile", "choice", "verse", "default weights for a text type (verse: with line position)",
                 choices=("verse", "prose")),
           Param("candidates", "choice", "union", "candidates: every channel's own list taken round robin (rank 1 "
                 "of each, then rank 2 ...) up to one budget, or the fused score's top k alone",
                 choices=("union", "fused")),
           Param("vectors", "model", "la-lemma-cbow100", "word vectors (reference rarity, synonyms, semantics); "
                 "default: Latin Library lemma vectors shipped in data/vectors", nullable=True),
           Param("synonyms", "str", "vectors", "synonyms: 'vectors' (neighbours in the word vectors) or the name "
                 "of a Tesserae synonym list placed in the data directory's latin_synonyms/", nullable=True),
           Param("rare_min", "float", 7.0, "rarity (log of reference tokens per occurrence) from which one shared "
                 "lemma is enough (channel 'rare')", min=0.0, max=30.0),
           Param("encoder", "model", None, "a sentence encoder in the models directory (channel 'encoder'; "
                 "null: off)", nullable=True)]
    for ch in CHANNELS:
        if ch != "encoder":
            out.append(Param(ch, "bool", True, f"channel '{ch}' on or off"))
        out.append(Param(f"{ch}_weight", "float", None, f"weight of channel '{ch}' (null: the profile's; 0: off)",
                         min=0.0, max=100.0, nullable=True))
    out.append(Param("context_weight", "float", None, "weight of the neighbouring line pairs' scores (a parallel "
                     "running over lines); null: the profile's (verse 0.35, prose 0)", min=0.0, max=100.0,
                     nullable=True))
    out.append(Param("budget", "int", 1000, "candidates per query drawn from the channels' lists (round robin, "
                     "filled with the best scores when they run out) before the cut at k; k when larger", min=1,
                     max=100_000))
    return tuple(out)


def _channel_signals() -> tuple[str, ...]:
    from detection.channels.channel_features import SIGNALS

    return SIGNALS


register(MethodSpec(
    "channels", "retriever", _channels,
    "Multi-channel Latin detection: lemma, rare lemma, form, quotation run, sound, edit distance, synonyms, "
    "word order, verse position, static-vector semantics (and an encoder when set), weighted by reference "
    "rarity; candidates from every channel; each candidate explained",
    languages=LATIN, params=_channel_params(), internal=("cache_dir", "block_size"), signals=_channel_signals()))

# ----------------------------------------------------------------------------------- Greek pair scorers


def _check_preprocess(value: dict) -> dict:
    allowed = set(GreekPreprocessor().to_dict())
    unknown = set(value) - allowed
    if unknown:
        raise ValueError(f"unknown preprocessing option(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    return GreekPreprocessor(**value).to_dict()


_PREPROCESS = Param("preprocess", "object", None, "Greek preprocessing options (GreekPreprocessor fields)",
                    nullable=True, validator=_check_preprocess)
_EMBEDDING = (
    Param("vector_size", "int", 100, "dimension of the word vectors", min=4, max=1024),
    Param("window", "int", 5, "context window", min=1, max=50),
    Param("min_count", "int", 1, "ignore rarer words", min=1, max=10_000),
    Param("epochs", "int", 20, "training epochs", min=1, max=200),
    Param("seed", "int", 42, "random seed", min=0, max=2**31 - 1),
    Param("min_n", "int", 3, "FastText: shortest character n-gram", min=1, max=10),
    Param("max_n", "int", 5, "FastText: longest character n-gram", min=1, max=10),
    Param("bucket", "int", 100_000, "FastText: n-gram hash buckets", min=1_000, max=10_000_000),
    Param("lemmatiser", "choice", "rules", "Greek lemmatiser", choices=("rules", "simplemma")),
)
_DEVICE = Param("device", "choice", "auto", "where to run the encoder (auto: CUDA when present)",
                choices=("auto", "cpu", "cuda"))
_MODEL = Param("model", "model", None, "a model name in the models directory or a hub id", nullable=True)
_BATCH = Param("batch_size", "int", 32, "encoder batch size", min=1, max=4096)


def _greek(cls_name):
    def factory(**kw):
        from .greek import greek_similarity

        return getattr(greek_similarity, cls_name)(**kw)

    return factory


def _greek_spec(name, cls_name, description, params=(), fixed=None, needs_gpu=False, internal=()):
    register(MethodSpec(name, "pair_scorer", _greek(cls_name), description, languages=GREEK,
                        params=tuple(params) + (_PREPROCESS,), fixed=fixed or {}, needs_gpu=needs_gpu,
                        internal=internal))


_greek_spec("levenshtein", "NormalisedLevenshtein", "Character-level normalised Levenshtein similarity (baseline)")
_greek_spec("char_ngram", "CharNgramTfidf", "TF-IDF of character n-grams (2–4 by default), cosine (baseline)",
            params=(Param("ngram_min", "int", 2, "shortest n-gram", min=1, max=10),
                    Param("ngram_max", "int", 4, "longest n-gram", min=1, max=10)))
for _name, _algo, _sg, _lemmas, _text in (
        ("word2vec_sg", "word2vec", 1, False, "Word2Vec skip-gram on surface forms"),
        ("word2vec_cbow", "word2vec", 0, False, "Word2Vec CBOW on surface forms"),
        ("word2vec_sg_lemma", "word2vec", 1, True, "Word2Vec skip-gram on lemmas"),
        ("word2vec_cbow_lemma", "word2vec", 0, True, "Word2Vec CBOW on lemmas"),
        ("fasttext", "fasttext", 1, False, "FastText skip-gram (subword n-grams) on surface forms"),
        ("fasttext_lemma", "fasttext", 1, True, "FastText skip-gram on lemmas")):
    _greek_spec(_name, "StaticEmbedding", f"{_text}, mean verse vector, cosine", params=_EMBEDDING,
                fixed={"algorithm": _algo, "sg": _sg, "lemmas": _lemmas})
_NORMALISE = Param("normalise", "choice", "max", "divide the distance by the longer verse (symmetric) or by "
                   "the reference's / candidate's length (directional)", choices=("max", "reference", "candidate"))
for _name, _vectors, _lemmas, _norm, _text in (
        ("semantic_edit", "fasttext", False, "max",
         "Semantically informed edit distance: word Levenshtein, substitution cost 1 − cos (FastText vectors)"),
        ("semantic_edit_w2v_lemma", "word2vec_sg", True, "max",
         "Semantically informed edit distance on lemmas with Word2Vec skip-gram vectors"),
        ("semantic_edit_directional", "fasttext", False, "reference",
         "Semantic edit distance normalised by the reference's length (asymmetric: A→B ≠ B→A)")):
    _greek_spec(_name, "SemanticEditDistance", _text,
                params=(Param("normalise", "choice", _norm, _NORMALISE.help, choices=_NORMALISE.choices),)
                + tuple(p for p in _EMBEDDING if p.name != "lemmatiser"),
                fixed={"vectors": _vectors, "lemmas": _lemmas}, internal=("max_block_cells",))
_greek_spec("contextual", "ContextualMean", "Contextual token embeddings (transformers AutoModel) averaged per verse",
            params=(_MODEL, Param("layer", "int", -1, "hidden layer (-1: last)", min=-64, max=64), _BATCH,
                    Param("max_length", "int", 128, "tokens per verse", min=8, max=4096), _DEVICE),
            needs_gpu=True)
_greek_spec("sentence_transformer", "SentenceTransformerMethod", "sentence-transformers verse embeddings, cosine",
            params=(_MODEL, _BATCH, _DEVICE), needs_gpu=True)

# The rerankers and the semantic first stage, in their own catalogs.
from . import catalog_rerank, catalog_semantic  # noqa: E402

CATALOG.extend(catalog_rerank.CATALOG)
CATALOG.extend(catalog_semantic.CATALOG)
