"""Verse-similarity methods. Every method has the same interface:

- ``fit(texts)``: train on the verses available (static embeddings); a no-op for the others.
- ``similarity_matrix(a_texts, b_texts, progress=None) -> np.ndarray[float32]`` of shape (len(a), len(b)):
  row i, column j is the similarity of ``a[i]`` (the reference) to ``b[j]`` (the candidate).
- ``pair_scores(a_texts, b_texts) -> np.ndarray[float32]``: aligned pairs, ``a[i]`` → ``b[i]``.
- ``symmetric``: whether sim(a, b) == sim(b, a) by construction (every cosine method is).

All computations are vectorised (matrix products, rapidfuzz's C ``cdist``, a numpy edit-distance DP that
runs over the rows of the DP table for many pairs at once), never a Python loop per pair.
"""
from __future__ import annotations

import abc
import os
from typing import Callable, Sequence

import numpy as np

from detection.greek.lemmatize import GreekLemmatizer
from detection.greek.preprocess import GreekPreprocessor, make_preprocessor

from ..infrastructure.device import resolve_device
from ..infrastructure.model_store import ModelUnavailable  # one error class everywhere
from ..infrastructure.model_store import resolve as resolve_model

Progress = Callable[[float, str], None] | None


def _model_error(kind: str, model: str, exc: Exception) -> ModelUnavailable:
    offline = os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("TRANSFORMERS_OFFLINE") == "1"
    hint = (
        f"Provide a local copy: download it on a machine with internet access (e.g. "
        f"`huggingface-cli download {model} --local-dir <models directory>/<name>`) and pass that name"
        f" (a directory holding config.json and the weights)."
    )
    where = " (offline mode: HF_HUB_OFFLINE=1)" if offline else ""
    return ModelUnavailable(f"Could not load {kind} model {model!r}{where}: {exc}. {hint}")


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _report(progress: Progress, fraction: float, message: str) -> None:
    if progress is not None:
        progress(float(min(max(fraction, 0.0), 1.0)), message)


class SimilarityMethod(abc.ABC):
    name: str = "base"
    symmetric: bool = True

    def __init__(self, preprocess: GreekPreprocessor | dict | None = None, **params):
        self.preprocessor = make_preprocessor(preprocess)
        self.params = dict(params)
        self.params["preprocess"] = self.preprocessor.to_dict()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"

    def describe(self) -> dict:
        return {"name": self.name, "class": type(self).__name__, "symmetric": self.symmetric, "params": self.params}

    def fit(self, texts: Sequence[str]) -> "SimilarityMethod":
        return self

    def tokens(self, text: str) -> list[str]:
        return self.preprocessor.tokenize(text)

    @abc.abstractmethod
    def similarity_matrix(self, a_texts: Sequence[str], b_texts: Sequence[str], progress: Progress = None) -> np.ndarray:
        """(len a, len b) float32 similarities in [0, 1]."""

    @abc.abstractmethod
    def pair_scores(self, a_texts: Sequence[str], b_texts: Sequence[str], progress: Progress = None) -> np.ndarray:
        """Similarity of each aligned pair (a[i], b[i])."""


# ----------------------------------------------------------------------------------------------------
# Embedding methods: cosine of verse vectors
# ----------------------------------------------------------------------------------------------------
class EmbeddingMethod(SimilarityMethod):
    """Cosine similarity of verse vectors produced by :meth:`embed`."""

    def _load_model(self, method: str, library: str, load) -> None:
        """Resolve the ``model`` parameter (a models-directory name or hub id) and call ``load(path)``; a failure
        to load becomes ModelUnavailable naming the model."""
        name = self.params.get("model")
        if not name:
            raise ModelUnavailable(f"the {method!r} method needs model=<a name in the models directory or a hub id>")
        path = resolve_model(name)  # ModelUnavailable with its own message when neither local nor reachable
        try:
            load(path)
        except Exception as exc:  # noqa: BLE001 - re-raised with a clear message
            raise _model_error(library, name, exc) from exc

    @abc.abstractmethod
    def embed(self, texts: Sequence[str], progress: Progress = None) -> np.ndarray:
        """(len texts, dim) verse vectors."""

    def _unique_embed(self, texts: Sequence[str], progress: Progress = None) -> tuple[np.ndarray, np.ndarray]:
        uniq, inverse = np.unique(np.asarray(list(texts), dtype=object).astype(str), return_inverse=True)
        vecs = _unit_rows(self.embed(list(uniq), progress=progress))
        return vecs, inverse

    def similarity_matrix(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        texts = list(a_texts) + list(b_texts)
        vecs, inv = self._unique_embed(texts, progress)
        ea = vecs[inv[: len(a_texts)]]
        eb = vecs[inv[len(a_texts):]]
        out = (ea @ eb.T).astype(np.float32)
        _report(progress, 1.0, "cosine matrix done")
        return out

    def pair_scores(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        if len(a_texts) != len(b_texts):
            raise ValueError("pair_scores needs aligned lists of equal length")
        texts = list(a_texts) + list(b_texts)
        vecs, inv = self._unique_embed(texts, progress)
        ea = vecs[inv[: len(a_texts)]]
        eb = vecs[inv[len(a_texts):]]
        return np.einsum("ij,ij->i", ea, eb).astype(np.float32)


class CharNgramTfidf(SimilarityMethod):
    """TF-IDF over character n-grams (within word boundaries), cosine. Baseline."""

    def __init__(self, ngram_min: int = 2, ngram_max: int = 4, preprocess=None):
        super().__init__(preprocess, ngram_min=ngram_min, ngram_max=ngram_max)
        self.vectorizer = None

    def fit(self, texts):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(self.params["ngram_min"], self.params["ngram_max"]), lowercase=False,
            dtype=np.float32,
        )
        self.vectorizer.fit([self.preprocessor.normalise(t) for t in texts])
        return self

    def _matrix(self, texts):
        if self.vectorizer is None:
            self.fit(texts)
        return self.vectorizer.transform([self.preprocessor.normalise(t) for t in texts])  # l2-normalised rows

    def similarity_matrix(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        if self.vectorizer is None:
            self.fit(list(a_texts) + list(b_texts))
        ma, mb = self._matrix(a_texts), self._matrix(b_texts)
        out = (ma @ mb.T).toarray().astype(np.float32)
        _report(progress, 1.0, "char n-gram matrix done")
        return out

    def pair_scores(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        if self.vectorizer is None:
            self.fit(list(a_texts) + list(b_texts))
        ma, mb = self._matrix(a_texts), self._matrix(b_texts)
        return np.asarray(ma.multiply(mb).sum(axis=1)).ravel().astype(np.float32)


class StaticEmbedding(EmbeddingMethod):
    """gensim Word2Vec (skip-gram ``sg=1`` / CBOW ``sg=0``) or FastText, on surface forms or lemmas.

    Verse vector = mean of its word vectors (words without a vector are skipped; FastText builds one from
    character n-grams for every word). Training is deterministic: fixed ``seed``, ``workers=1``.
    """

    def __init__(self, algorithm: str = "word2vec", sg: int = 1, lemmas: bool = False, vector_size: int = 100,
                 window: int = 5, min_count: int = 1, epochs: int = 20, seed: int = 42, min_n: int = 3,
                 max_n: int = 5, bucket: int = 100_000, lemmatiser: str = "rules", preprocess=None):
        if algorithm not in ("word2vec", "fasttext"):
            raise ValueError("algorithm must be 'word2vec' or 'fasttext'")
        super().__init__(preprocess, algorithm=algorithm, sg=int(sg), lemmas=bool(lemmas), vector_size=int(vector_size),
                         window=int(window), min_count=int(min_count), epochs=int(epochs), seed=int(seed),
                         min_n=int(min_n), max_n=int(max_n), bucket=int(bucket), lemmatiser=lemmatiser)
        self.lemmatiser = GreekLemmatizer(lemmatiser) if lemmas else None
        self.model = None
        self.n_training_texts = 0

    def tokens(self, text: str) -> list[str]:
        toks = self.preprocessor.tokenize(text)
        if self.lemmatiser is not None:
            toks = [self.preprocessor.normalise(lemma) or lemma for lemma in self.lemmatiser.lemmatize(toks)]
        return toks

    def fit(self, texts):
        from gensim.models import FastText, Word2Vec

        sentences = [t for t in (self.tokens(x) for x in texts) if t]
        if not sentences:
            raise ValueError("no tokens to train on")
        p = self.params
        common = dict(vector_size=p["vector_size"], window=p["window"], min_count=p["min_count"], sg=p["sg"],
                      seed=p["seed"], workers=1, epochs=p["epochs"])
        if p["algorithm"] == "word2vec":
            self.model = Word2Vec(sentences=sentences, **common)
        else:
            self.model = FastText(sentences=sentences, min_n=p["min_n"], max_n=p["max_n"], bucket=p["bucket"], **common)
        self.n_training_texts = len(sentences)
        return self

    def _ensure_fitted(self, texts):
        if self.model is None:
            self.fit(texts)

    def word_vectors(self, tokens: Sequence[str]) -> np.ndarray:
        """(len(tokens), dim) float32; zero rows for words without a vector."""
        wv = self.model.wv
        out = np.zeros((len(tokens), wv.vector_size), dtype=np.float32)
        fasttext = self.params["algorithm"] == "fasttext"
        for i, t in enumerate(tokens):
            if fasttext or t in wv.key_to_index:
                try:
                    out[i] = wv[t]
                except KeyError:  # fasttext word with no n-gram of the right size
                    pass
        return out

    def embed(self, texts, progress: Progress = None) -> np.ndarray:
        self._ensure_fitted(texts)
        dim = self.model.wv.vector_size
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, text in enumerate(texts):
            vecs = self.word_vectors(self.tokens(text))
            known = np.any(vecs != 0, axis=1)
            if known.any():
                out[i] = vecs[known].mean(axis=0)
        _report(progress, 0.9, f"embedded {len(texts)} verses")
        return out


class ContextualMean(EmbeddingMethod):
    """Contextual token embeddings (transformers ``AutoModel``) averaged over the verse's tokens.

    ``model``: a hub name or a local directory. ``layer``: which hidden layer (-1 = last). Special tokens
    ([CLS], [SEP], padding) are excluded from the mean.
    """

    def __init__(self, model: str | None = None, layer: int = -1, batch_size: int = 32, max_length: int = 128,
                 device: str = "auto", preprocess=None):
        super().__init__(preprocess, model=model, layer=int(layer), batch_size=int(batch_size),
                         max_length=int(max_length), device=device)
        self._tok = self._model = None

    def _load(self):
        if self._model is not None:
            return

        def load(path):
            from transformers import AutoModel, AutoTokenizer

            self._device = resolve_device(self.params["device"])
            self._tok = AutoTokenizer.from_pretrained(path)
            self._model = AutoModel.from_pretrained(path).to(self._device).eval()

        self._load_model("contextual", "transformers", load)

    def embed(self, texts, progress: Progress = None) -> np.ndarray:
        import torch

        self._load()
        bs = self.params["batch_size"]
        chunks = []
        normalised = [self.preprocessor.normalise(t) for t in texts]
        positions = getattr(self._model.config, "max_position_embeddings", None)  # a model pretrained on short
        max_length = min(self.params["max_length"], positions or self.params["max_length"])  # blocks embeds fewer
        for start in range(0, len(normalised), bs):
            batch = normalised[start : start + bs]
            enc = self._tok(batch, padding=True, truncation=True, max_length=max_length,
                            return_tensors="pt", return_special_tokens_mask=True)
            special = enc.pop("special_tokens_mask")
            enc = {k: v.to(self._device) for k, v in enc.items()}
            with torch.no_grad():
                out = self._model(**enc, output_hidden_states=True)
            hidden = out.hidden_states[self.params["layer"]]
            mask = (enc["attention_mask"].bool() & ~special.bool().to(hidden.device)).unsqueeze(-1).float()
            summed = (hidden * mask).sum(dim=1)
            counts = mask.sum(dim=1).clamp(min=1.0)
            chunks.append((summed / counts).cpu().numpy().astype(np.float32))
            _report(progress, 0.9 * min(1.0, (start + bs) / max(1, len(normalised))), "embedding verses")
        dim = self._model.config.hidden_size
        return np.concatenate(chunks) if chunks else np.zeros((0, dim), np.float32)


class SentenceTransformerMethod(EmbeddingMethod):
    """sentence-transformers verse embeddings (any model name or local path), cosine."""

    def __init__(self, model: str | None = None, batch_size: int = 32, device: str = "auto", preprocess=None):
        super().__init__(preprocess, model=model, batch_size=int(batch_size), device=device)
        self._model = None

    def _load(self):
        if self._model is not None:
            return

        def load(path):
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(path, device=resolve_device(self.params["device"]))

        self._load_model("sentence_transformer", "sentence-transformers", load)

    def embed(self, texts, progress: Progress = None) -> np.ndarray:
        self._load()
        normalised = [self.preprocessor.normalise(t) for t in texts]
        vecs = self._model.encode(normalised, batch_size=self.params["batch_size"], convert_to_numpy=True,
                                  show_progress_bar=False)
        _report(progress, 0.9, f"embedded {len(texts)} verses")
        return np.asarray(vecs, dtype=np.float32)


# ----------------------------------------------------------------------------------------------------
# Character-level Levenshtein baseline
# ----------------------------------------------------------------------------------------------------
class NormalisedLevenshtein(SimilarityMethod):
    """1 − Levenshtein(a, b) / max(len a, len b) on the normalised verse strings (rapidfuzz, C)."""

    def __init__(self, preprocess=None):
        super().__init__(preprocess)

    def similarity_matrix(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        a = [self.preprocessor.normalise(t) for t in a_texts]
        b = [self.preprocessor.normalise(t) for t in b_texts]
        out = process.cdist(a, b, scorer=Levenshtein.normalized_similarity, dtype=np.float32, workers=1)
        _report(progress, 1.0, "levenshtein matrix done")
        return out

    def pair_scores(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        if len(a_texts) != len(b_texts):
            raise ValueError("pair_scores needs aligned lists of equal length")
        a = [self.preprocessor.normalise(t) for t in a_texts]
        b = [self.preprocessor.normalise(t) for t in b_texts]
        return process.cpdist(a, b, scorer=Levenshtein.normalized_similarity, dtype=np.float32, workers=1)


# ----------------------------------------------------------------------------------------------------
# Semantically informed edit distance
# ----------------------------------------------------------------------------------------------------
def edit_distance_dp(cost: np.ndarray, len_a: np.ndarray, len_b: np.ndarray) -> np.ndarray:
    """Weighted Levenshtein distances for a batch of word sequences.

    ``cost[p, i, j]`` is the substitution cost of word i of a_p by word j of b_p (padding beyond the lengths
    is ignored); insertion and deletion cost 1. The DP runs row by row for all pairs at once; within a row the
    insertion chain is a cumulative minimum (D[r, c] = min_k≤c T[r, k] + (c − k)), so every row is a handful of
    numpy operations over the whole (pairs × columns) slab.
    """
    cost = np.asarray(cost, dtype=np.float32)
    P, La, Lb = cost.shape
    len_a = np.asarray(len_a, dtype=np.int64)
    len_b = np.asarray(len_b, dtype=np.int64)
    cols = np.arange(Lb + 1, dtype=np.float32)
    prev = np.broadcast_to(cols, (P, Lb + 1)).copy()
    result = np.where(len_a == 0, len_b, 0).astype(np.float32)
    rows = np.arange(P)
    T = np.empty((P, Lb + 1), dtype=np.float32)
    for r in range(1, La + 1):
        T[:, 0] = r
        np.minimum(prev[:, 1:] + 1.0, prev[:, :-1] + cost[:, r - 1, :], out=T[:, 1:])
        cur = np.minimum.accumulate(T - cols, axis=1) + cols
        done = len_a == r
        if done.any():
            result[done] = cur[rows[done], len_b[done]]
        prev = cur
    return result


def _gather_vectors(wvecs: np.ndarray, id_block: np.ndarray) -> np.ndarray:
    """Word vectors for a block of padded token ids (``-1`` = padding, given a zero vector)."""
    v = np.zeros(id_block.shape + (wvecs.shape[1],), dtype=np.float32)
    ok = id_block >= 0
    v[ok] = wvecs[id_block[ok]]
    return v


def _normalise_distance(dist: np.ndarray, len_a: np.ndarray, len_b: np.ndarray, mode: str) -> np.ndarray:
    if mode == "max":
        denom = np.maximum(len_a, len_b)
    elif mode == "reference":
        denom = len_a
    elif mode == "candidate":
        denom = len_b
    else:
        raise ValueError("normalise must be 'max', 'reference' or 'candidate'")
    denom = denom.astype(np.float32)
    sim = np.where(denom > 0, 1.0 - dist / np.maximum(denom, 1.0), np.where(np.maximum(len_a, len_b) == 0, 1.0, 0.0))
    return np.clip(sim, 0.0, 1.0).astype(np.float32)


class _FixedVectors:
    """Word vectors given as a mapping (for pretrained vectors, and for tests)."""

    def __init__(self, mapping: dict, preprocessor: GreekPreprocessor):
        self.model = mapping
        self.preprocessor = preprocessor
        self.dim = len(next(iter(mapping.values()))) if mapping else 1

    def fit(self, texts):
        return self

    def tokens(self, text: str) -> list[str]:
        return self.preprocessor.tokenize(text)

    def word_vectors(self, tokens):
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        for i, t in enumerate(tokens):
            if t in self.model:
                out[i] = self.model[t]
        return out


class SemanticEditDistance(SimilarityMethod):
    """Word-level Levenshtein where substituting word x by word y costs 1 − cos(v_x, v_y) (clipped to [0, 1]).

    Insertions and deletions cost 1; identical words cost 0 (even without a vector); a word without a vector
    costs 1 to substitute. Similarity = 1 − distance / max(len_a, len_b) (``normalise="max"``, symmetric), or
    divided by the reference's (``"reference"``) or the candidate's length (``"candidate"``): asymmetric
    variants for the directionality check. Word vectors come from a :class:`StaticEmbedding` trained in
    :meth:`fit` (``vectors``: ``fasttext`` | ``word2vec_sg`` | ``word2vec_cbow``; ``lemmas`` compares lemmas),
    or given as a mapping word → vector (then ``fit`` does nothing).
    """

    VECTORS = {"fasttext": ("fasttext", 1), "word2vec_sg": ("word2vec", 1), "word2vec_cbow": ("word2vec", 0)}

    def __init__(self, vectors: str = "fasttext", lemmas: bool = False, normalise: str = "max",
                 max_block_cells: int = 8_000_000, preprocess=None, **embedding_params):
        if not isinstance(vectors, dict) and vectors not in self.VECTORS:
            raise ValueError(f"vectors must be one of {sorted(self.VECTORS)}")
        if normalise not in ("max", "reference", "candidate"):
            raise ValueError("normalise must be 'max', 'reference' or 'candidate'")
        super().__init__(preprocess, vectors=vectors if isinstance(vectors, str) else "<given>", lemmas=bool(lemmas),
                         normalise=normalise,
                         max_block_cells=int(max_block_cells), **embedding_params)
        if isinstance(vectors, dict):
            self.embedding = _FixedVectors(vectors, self.preprocessor)
            self.symmetric = normalise == "max"
            return
        algorithm, sg = self.VECTORS[vectors]
        self.embedding = StaticEmbedding(algorithm=algorithm, sg=sg, lemmas=lemmas, preprocess=self.preprocessor,
                                         **embedding_params)
        self.symmetric = normalise == "max"

    def fit(self, texts):
        self.embedding.fit(texts)
        return self

    def tokens(self, text: str) -> list[str]:
        return self.embedding.tokens(text)

    def _encode(self, texts):
        """Padded token ids, lengths and unit word vectors (n, L, d) for a list of verses."""
        if self.embedding.model is None:
            self.embedding.fit(texts)
        toks = [self.tokens(t) for t in texts]
        lengths = np.array([len(t) for t in toks], dtype=np.int64)
        L = max(1, int(lengths.max()) if len(toks) else 1)
        vocab: dict[str, int] = {}
        ids = np.full((len(toks), L), -1, dtype=np.int64)
        for i, t in enumerate(toks):
            for j, w in enumerate(t):
                ids[i, j] = vocab.setdefault(w, len(vocab))
        words = list(vocab)
        wvecs = _unit_rows(self.embedding.word_vectors(words)) if words else np.zeros((0, 1), np.float32)
        return ids, lengths, wvecs

    @staticmethod
    def _costs(ua, ub, ida, idb, pairwise: bool):
        """Substitution costs: ua (p, La, d), ub (q, Lb, d) → (p, q, La, Lb) or aligned (p, La, Lb)."""
        if pairwise:
            cos = np.einsum("prd,pcd->prc", ua, ub)
            same = (ida[:, :, None] == idb[:, None, :]) & (ida[:, :, None] >= 0)
        else:
            p, La, d = ua.shape
            q, Lb, _ = ub.shape
            cos = (ua.reshape(p * La, d) @ ub.reshape(q * Lb, d).T).reshape(p, La, q, Lb).transpose(0, 2, 1, 3)
            same = (ida[:, None, :, None] == idb[None, :, None, :]) & (ida[:, None, :, None] >= 0)
        cost = 1.0 - np.clip(cos, 0.0, 1.0)
        cost[same] = 0.0
        return cost.astype(np.float32, copy=False)

    def similarity_matrix(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        a_texts, b_texts = list(a_texts), list(b_texts)
        if self.embedding.model is None:
            self.embedding.fit(a_texts + b_texts)
        ids, lengths, wvecs = self._encode(a_texts + b_texts)
        na = len(a_texts)
        ida, idb = ids[:na], ids[na:]
        la_all, lb_all = lengths[:na], lengths[na:]
        out = np.zeros((na, len(b_texts)), dtype=np.float32)
        if na == 0 or not b_texts:
            return out

        order_a = np.argsort(la_all, kind="stable")
        order_b = np.argsort(lb_all, kind="stable")
        max_cells = self.params["max_block_cells"]
        # B in chunks of similar length, A in blocks sized so pairs × La × Lb stays under max_cells.
        b_chunk = max(1, min(len(order_b), 2048))
        b_chunks = [order_b[s : s + b_chunk] for s in range(0, len(order_b), b_chunk)]
        total = na * len(b_texts)
        done_pairs = 0
        start = 0
        la_sorted = np.maximum(la_all[order_a], 1)
        widest_b = max(1, int(lb_all.max()))
        q_max = min(len(order_b), b_chunk)
        while start < na:
            # la_sorted is ascending, so the cells of a block of the next k verses grow with k:
            # take the largest k with k × La(block) × Lb(widest) × q ≤ max_cells.
            cells = np.arange(1, na - start + 1) * la_sorted[start:] * widest_b * q_max
            k = max(1, int(np.searchsorted(cells, max_cells, side="right")))
            blk = order_a[start : start + k]
            La = max(1, int(la_all[blk].max()))
            ua = _gather_vectors(wvecs, ida[blk, :La])
            for bc in b_chunks:
                Lb = max(1, int(lb_all[bc].max()))
                ub = _gather_vectors(wvecs, idb[bc, :Lb])
                cost = self._costs(ua, ub, ida[blk, :La], idb[bc, :Lb], pairwise=False)
                p, q = len(blk), len(bc)
                la = np.repeat(la_all[blk], q)
                lb = np.tile(lb_all[bc], p)
                dist = edit_distance_dp(cost.reshape(p * q, La, Lb), la, lb)
                out[np.ix_(blk, bc)] = _normalise_distance(dist, la, lb, self.params["normalise"]).reshape(p, q)
                done_pairs += p * q
                _report(progress, done_pairs / total, f"edit distance: {done_pairs}/{total} pairs")
            start += len(blk)
        return out

    def pair_scores(self, a_texts, b_texts, progress: Progress = None) -> np.ndarray:
        a_texts, b_texts = list(a_texts), list(b_texts)
        if len(a_texts) != len(b_texts):
            raise ValueError("pair_scores needs aligned lists of equal length")
        if not a_texts:
            return np.zeros(0, np.float32)
        if self.embedding.model is None:
            self.embedding.fit(a_texts + b_texts)
        ids, lengths, wvecs = self._encode(a_texts + b_texts)
        n = len(a_texts)
        ida, idb, la, lb = ids[:n], ids[n:], lengths[:n], lengths[n:]

        out = np.zeros(n, np.float32)
        step = 50_000
        for s in range(0, n, step):
            sl = slice(s, s + step)
            cost = self._costs(_gather_vectors(wvecs, ida[sl]), _gather_vectors(wvecs, idb[sl]), ida[sl], idb[sl],
                               pairwise=True)
            dist = edit_distance_dp(cost, la[sl], lb[sl])
            out[sl] = _normalise_distance(dist, la[sl], lb[sl], self.params["normalise"])
        return out
