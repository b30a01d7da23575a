"""The semantic first-stage methods and what each declares (imported by :mod:`detection.methods.catalog`).

- ``static-dense``: SIF/uSIF segment vectors from registered word vectors, exact cosine top-k;
- ``hybrid``: a lexical retriever's top ``depth`` rescored with a static-vector signal (MaxSim, soft cosine,
  SIF/uSIF) and fused; the weight is tuned on training folds when left unset;
- ``dense-encoder``: a sentence-transformers bi-encoder (hub id or model-directory name, including one fine-tuned by
  a training job: ``NAME/fold-<f>``, or ``NAME`` evaluated per fold), exact top-k;
- ``token-maxsim``: ColBERT-style late interaction over contextual token vectors of any ``transformers``
  encoder (``aggregate="mean"``: token vectors averaged per segment, Gong et al.).

Word-vector models are named, never given as paths: ``manage.py train_embeddings ... --name NAME`` stores them.
"""
from __future__ import annotations

from .semantic import check_hybrid_candidates
from .specs import Catalog, MethodSpec, Param

CATALOG = Catalog()  # a plain list: the registry reads it through catalog.py
register = CATALOG.add

LATIN = ("la",)
_VECTORS = Param("model", "model", "la-lemma-cbow200",
                 "a word-vector model trained with `manage.py train_embeddings` (its name in the models directory)")
_ENCODER = Param("model", "model", None, "a sentence-transformers / transformers model: its name in the models "
                 "directory or a hub id")
_DEVICE = Param("device", "choice", "auto", "where to run the encoder (auto: CUDA when present)",
                choices=("auto", "cpu", "cuda"))
_BATCH = Param("batch_size", "int", 64, "encoder batch size (halved and retried on out-of-memory)", min=1, max=4096)
_BACKEND = Param("backend", "choice", "auto", "exact search: numpy blocks, faiss IndexFlatIP, or auto "
                 "(faiss only when numpy would not fit)", choices=("auto", "numpy", "faiss"))
_MAXLEN = Param("max_length", "int", 128, "tokens per segment", min=8, max=4096)


def _dense(**kw):
    from .semantic.hybrid import StaticDenseRetriever

    return StaticDenseRetriever(**kw)


def _hybrid(**kw):
    from .semantic.hybrid import HybridRetriever

    return HybridRetriever(**kw)


def _encoder(cls_name):
    def factory(**kw):
        from .semantic import encoders

        return getattr(encoders, cls_name)(**kw)

    return factory


register(MethodSpec(
    "static-dense", "retriever", _dense,
    "SIF / uSIF averages of corpus-trained word vectors, common component removed, exact cosine top-k",
    languages=LATIN,
    params=(_VECTORS, Param("scheme", "choice", "sif", "segment weighting", choices=("sif", "usif", "mean")),
            _BACKEND),
    internal=("cache_dir", "vectors", "block_size")))
register(MethodSpec(
    "hybrid", "retriever", _hybrid,
    "Lexical top-k (BM25 on lemmas by default) rescored with corpus-trained word vectors and fused; the weight is "
    "chosen on the training folds when left unset",
    languages=LATIN, supervised=True,
    params=(Param("lexical", "choice", "bm25-lemma", "the lexical first stage",
                  choices=("bm25-lemma", "bm25-surface", "tfidf-lemma", "tfidf-surface")),
            _VECTORS,
            Param("semantic", "choice", "maxsim", "second signal: idf-weighted MaxSim of the query's words, soft "
                  "cosine, or SIF/uSIF segment cosine", choices=("maxsim", "softcos", "sif", "usif")),
            Param("candidates", "choice", "lexical", "rescore the lexical top-k, or its union with the dense top-k "
                  "(sif/usif only)", choices=("lexical", "union")),
            Param("fusion", "choice", "interp", "score interpolation or reciprocal-rank fusion",
                  choices=("interp", "rrf")),
            Param("normalise", "choice", "minmax", "per-query normalisation of each list before interpolation",
                  choices=("minmax", "zscore")),
            Param("weight", "float", None, "weight of the semantic signal (null: chosen on the training folds, "
                  "0.5 without them)", min=0.0, max=1.0, nullable=True),
            Param("depth", "int", 1000, "lexical candidates per query", min=1, max=100_000),
            Param("threshold", "float", 0.5, "MaxSim / soft cosine: word cosines at or below count 0",
                  min=-1.0, max=1.0)),
    internal=("cache_dir", "n_jobs", "block_size", "vectors"), components=("lexical",),
    checks=(check_hybrid_candidates,)))
register(MethodSpec(
    "dense-encoder", "retriever", _encoder("BiEncoderRetriever"),
    "sentence-transformers bi-encoder (any model by name or hub id), exact cosine top-k",
    languages=LATIN, needs_gpu=True,
    params=(_ENCODER, _BATCH, _DEVICE, _BACKEND,
            Param("query_prefix", "str", None, "text put before every query (E5: 'query: '; null: a fine-tuned "
                  "bi-encoder's own, else none)", nullable=True),
            Param("passage_prefix", "str", None, "text put before every source (E5: 'passage: '; null: a "
                  "fine-tuned bi-encoder's own, else none)", nullable=True),
            Param("fp16", "bool", True, "half precision on a GPU")),
    internal=("cache_dir", "progress_every")))
register(MethodSpec(
    "token-maxsim", "retriever", _encoder("TokenMaxSimRetriever"),
    "Contextual token vectors of a transformers encoder: ColBERT-style MaxSim (late interaction) or their mean "
    "per segment (token-level retrieval)",
    languages=LATIN, needs_gpu=True,
    params=(_ENCODER, _BATCH, _DEVICE, _MAXLEN,
            Param("aggregate", "choice", "maxsim", "late interaction, or mean-pooled token vectors",
                  choices=("maxsim", "mean")),
            Param("layer", "int", -1, "hidden layer (-1: last)", min=-64, max=64),
            Param("depth", "int", 1000, "maxsim: candidates from the mean-pooled first stage", min=1, max=100_000),
            Param("fp16", "bool", True, "half precision on a GPU")),
    internal=("cache_dir",)))

# ------------------------------------------------------------------ Greek pair scorers on corpus-trained vectors
GREEK = ("grc",)
_GRC_VECTORS = Param("model", "model", "grc-lemma-cbow200",
                     "Greek word vectors trained with `manage.py train_embeddings --language grc` (a model name)")


def _greek_static(cls_name):
    def factory(**kw):
        from .greek import greek_static

        return getattr(greek_static, cls_name)(**kw)

    return factory


register(MethodSpec(
    "corpus_vectors", "pair_scorer", _greek_static("CorpusStaticEmbedding"),
    "Word vectors trained on a large Greek corpus (Tesserae, 7.8 M words): mean or SIF verse vector, cosine",
    languages=GREEK,
    params=(_GRC_VECTORS, Param("scheme", "choice", "mean", "verse vector", choices=("mean", "sif", "usif")))))
register(MethodSpec(
    "semantic_edit_corpus", "pair_scorer", _greek_static("CorpusSemanticEdit"),
    "Semantic edit distance (substitution cost 1 − cos) with word vectors trained on a large Greek corpus",
    languages=GREEK,
    params=(_GRC_VECTORS, Param("normalise", "choice", "max", "divide by the longer verse, the reference or the "
                                "candidate", choices=("max", "reference", "candidate"))),
    internal=("max_block_cells",)))
