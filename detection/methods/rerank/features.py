"""Per-pair features for the feature-classifier rerankers (seed 000 §4.2, Appendix E.4, plus verse signals).

For a (query, candidate) pair the features are:

- the first stage's view: retrieval score, the score relative to the query's best, 1/rank and log rank;
- TF-IDF cosine over content-lemma 1-grams, lemma 1+2-grams and character 3–4-grams (word-bounded);
- lemma Jaccard, shared content lemmas, shared *rare* lemmas (document frequency ≤ ``rare_df`` in the fitted
  texts) and the summed IDF of the shared lemmas; raw-token overlap (shared surface forms, their Jaccard);
- lengths: content words of each side and their ratio;
- the signals philologists use for verse: shared lemmas standing at the same place counted from the end of
  the segment (a line-final word echoing a line-final word), ordered shared pairs (lemma ``a`` before ``b``
  within ``gap`` content words on both sides: a gapped bigram), Tesserae's score (Forstall et al. 2014:
  ln((Σ 1/f_q + Σ 1/f_s) / (d_q + d_s)) over the shared lemmas, f the lemma's relative corpus frequency, d the
  span between the two rarest shared words; 0 below two shared lemmas) and sound: the Jaccard of the two
  texts' character trigrams;
- optionally an embedding cosine (:data:`EMBEDDING_FEATURE`): with ``vectors`` (a registered word-vector model,
  :func:`detection.methods.semantic.word_vectors.load_vectors`) the SIF cosine of the two segments' content units (the
  first stage's ``static-dense`` signal: SIF weights, common component fitted on the source pool and stored
  with the featurizer), else the cosine of two embeddings given by the caller.

Statistics (IDF, frequencies) come from :meth:`PairFeaturizer.fit` on the texts it is given, normally the source
pool: no labels are used, so fitting never sees a held-out fold's gold. No Django here.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BASE_FEATURES = (
    "retrieval_score", "retrieval_score_rel", "retrieval_rank_inv", "retrieval_log_rank",
    "tfidf_lemma_1", "tfidf_lemma_12", "tfidf_char_34",
    "lemma_jaccard", "shared_lemmas", "shared_rare_lemmas", "shared_idf_sum",
    "surface_overlap", "surface_jaccard",
    "len_query", "len_source", "len_ratio",
    "same_pos_from_end", "ordered_gapped_bigrams", "tesserae", "char3_jaccard",
)
EMBEDDING_FEATURE = "embedding_cos"


@dataclass(frozen=True)
class Analysed:
    """Content lemmas and surface forms of one text (stopwords removed, order kept), and its char trigrams."""

    lemmas: tuple[str, ...]
    surface: tuple[str, ...]
    trigrams: frozenset


def analyse_texts(texts: Sequence[str], *, cache_dir=None) -> list[Analysed]:
    """Tokenise, lemmatise (the Latin engine, cached per vocabulary) and drop stopwords."""
    from detection.latin.analysis import tokens_of
    from detection.latin.lemmatize import lemmatize_corpus
    from detection.latin.normalize import normalize_text
    from detection.latin.stopwords import LATIN_STOPWORDS as stop

    toks = tokens_of(texts)
    lems = lemmatize_corpus(toks, cache_dir=cache_dir)
    out = []
    for text, ts, ls in zip(texts, toks, lems):
        keep = [(t, lemma) for t, lemma in zip(ts, ls) if t not in stop and lemma not in stop]
        norm = normalize_text(text)
        out.append(Analysed(tuple(lemma for _, lemma in keep), tuple(t for t, _ in keep),
                            frozenset(norm[i:i + 3] for i in range(max(len(norm) - 2, 0)))))
    return out


def _joined(a: Analysed) -> str:
    return " ".join(a.lemmas)


def _rowwise_cos(A, B) -> np.ndarray:
    """Cosine of row i of A with row i of B (rows already L2-normalised)."""
    return np.asarray(A.multiply(B).sum(axis=1)).ravel()


class PairFeaturizer:
    """Fit corpus statistics once, then compute the feature matrix of any list of pairs.

    Args:
        rare_df: a shared lemma is *rare* when it occurs in at most this many fitted texts.
        gap: ordered pairs may stand at most ``gap`` content words apart (1 = adjacent).
        use_embedding: add :data:`EMBEDDING_FEATURE` (the caller passes the embeddings to :meth:`transform`
            unless ``vectors`` is set).
        vectors: name of a registered Latin word-vector model: :data:`EMBEDDING_FEATURE` is then the SIF cosine
            of the two segments, computed here (implies ``use_embedding``).
    """

    def __init__(self, rare_df: int = 50, gap: int = 3, use_embedding: bool = False, cache_dir=None,
                 vectors: str | None = None):
        self.rare_df = int(rare_df)
        self.gap = int(gap)
        self.vectors = vectors or None
        self.use_embedding = bool(use_embedding) or self.vectors is not None
        self.cache_dir = cache_dir
        self._sif = None
        self._fitted = False

    def _word_vectors(self):
        from detection.methods.semantic.word_vectors import load_vectors

        return load_vectors(self.vectors, language="la")

    def _units(self, a: Analysed) -> tuple[str, ...]:
        return a.surface if self._sif.wv.unit == "surface" else a.lemmas

    @property
    def feature_names(self) -> list[str]:
        return list(BASE_FEATURES) + ([EMBEDDING_FEATURE] if self.use_embedding else [])

    def fit(self, texts: Sequence[str], analysed: Sequence[Analysed] | None = None) -> PairFeaturizer:
        """Document frequencies, IDF and lemma frequencies of ``texts`` (no labels)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        an = list(analysed) if analysed is not None else analyse_texts(texts, cache_dir=self.cache_dir)
        docs = [_joined(a) for a in an]
        self._v1 = TfidfVectorizer(token_pattern=r"\S+", ngram_range=(1, 1), sublinear_tf=True, dtype=np.float32)
        self._v12 = TfidfVectorizer(token_pattern=r"\S+", ngram_range=(1, 2), sublinear_tf=True, dtype=np.float32)
        self._vc = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 4), sublinear_tf=True, dtype=np.float32,
                                   max_features=300_000)
        self._v1.fit(docs)
        self._v12.fit(docs)
        self._vc.fit([" ".join(a.surface) for a in an])
        df = Counter(lemma for a in an for lemma in set(a.lemmas))
        tf = Counter(lemma for a in an for lemma in a.lemmas)
        n_docs = max(len(an), 1)
        self._df = dict(df)
        self._idf = {w: math.log((1 + n_docs) / (1 + c)) + 1.0 for w, c in df.items()}
        self._idf_unknown = math.log(1 + n_docs) + 1.0
        total = max(sum(tf.values()), 1)
        self._freq = {w: c / total for w, c in tf.items()}
        self._freq_unknown = 1.0 / total
        if self.vectors is not None:
            from detection.methods.semantic.static_semantic import SegmentEncoder

            self._sif = SegmentEncoder(self._word_vectors(), "sif")
            self._sif.fit([self._units(a) for a in an])
        self._fitted = True
        return self

    def transform(self, queries: Sequence[Analysed], sources: Sequence[Analysed], qi: np.ndarray, si: np.ndarray,
                  retrieval_score: np.ndarray, retrieval_rank: np.ndarray,
                  query_emb: np.ndarray | None = None, source_emb: np.ndarray | None = None) -> np.ndarray:
        """Features (n_pairs, n_features) float32 for the pairs (queries[qi[n]], sources[si[n]]).

        ``retrieval_rank`` is 1-based; ``retrieval_score`` the first stage's score (NaN/inf read as 0).
        """
        if not self._fitted:
            raise RuntimeError("PairFeaturizer.transform before fit")
        qi = np.asarray(qi, np.int64)
        si = np.asarray(si, np.int64)
        n = qi.size
        score = np.nan_to_num(np.asarray(retrieval_score, np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        rank = np.maximum(np.asarray(retrieval_rank, np.float64), 1.0)
        best = np.zeros(len(queries))
        np.maximum.at(best, qi, score)
        rel = np.where(best[qi] > 0, score / np.where(best[qi] > 0, best[qi], 1.0), 0.0)
        cols = {"retrieval_score": score, "retrieval_score_rel": rel, "retrieval_rank_inv": 1.0 / rank,
                "retrieval_log_rank": np.log(rank)}
        uq, qinv = np.unique(qi, return_inverse=True)
        us, sinv = np.unique(si, return_inverse=True)
        for name, vec, field in (("tfidf_lemma_1", self._v1, "lemma"), ("tfidf_lemma_12", self._v12, "lemma"),
                                 ("tfidf_char_34", self._vc, "surface")):
            fq = [_joined(queries[i]) if field == "lemma" else " ".join(queries[i].surface) for i in uq]
            fs = [_joined(sources[j]) if field == "lemma" else " ".join(sources[j].surface) for j in us]
            cols[name] = _rowwise_cos(vec.transform(fq)[qinv], vec.transform(fs)[sinv])
        lexical = np.zeros((n, 13), np.float64)
        for r in range(n):
            lexical[r] = self._pair_lexical(queries[qi[r]], sources[si[r]])
        for c, name in enumerate(BASE_FEATURES[7:]):
            cols[name] = lexical[:, c]
        if self._sif is not None and (query_emb is None or source_emb is None):
            query_emb = np.zeros((len(queries), self._sif.wv.dim), np.float32)
            source_emb = np.zeros((len(sources), self._sif.wv.dim), np.float32)
            query_emb[uq] = self._sif.encode([self._units(queries[i]) for i in uq])
            source_emb[us] = self._sif.encode([self._units(sources[j]) for j in us])
        if self.use_embedding:
            if query_emb is None or source_emb is None:
                raise ValueError("this featurizer uses embeddings: pass query_emb and source_emb")
            a = np.asarray(query_emb, np.float64)[qi]
            b = np.asarray(source_emb, np.float64)[si]
            na = np.linalg.norm(a, axis=1)
            nb = np.linalg.norm(b, axis=1)
            cols[EMBEDDING_FEATURE] = (a * b).sum(1) / np.where(na * nb > 0, na * nb, 1.0)
        return np.column_stack([cols[name] for name in self.feature_names]).astype(np.float32)

    def _pair_lexical(self, q: Analysed, s: Analysed) -> list[float]:
        lq, ls = set(q.lemmas), set(s.lemmas)
        shared = lq & ls
        union = lq | ls
        rare = sum(1 for w in shared if self._df.get(w, 0) <= self.rare_df)
        idf_sum = sum(self._idf.get(w, self._idf_unknown) for w in shared)
        sq, ss = set(q.surface), set(s.surface)
        s_shared = len(sq & ss)
        s_union = len(sq | ss)
        len_q, len_s = len(q.lemmas), len(s.lemmas)
        ratio = min(len_q, len_s) / max(len_q, len_s) if max(len_q, len_s) else 0.0
        tri_union = len(q.trigrams | s.trigrams)
        char3 = len(q.trigrams & s.trigrams) / tri_union if tri_union else 0.0
        return [len(shared) / len(union) if union else 0.0, float(len(shared)), float(rare), idf_sum,
                float(s_shared), s_shared / s_union if s_union else 0.0,
                float(len_q), float(len_s), ratio,
                float(self._same_pos_from_end(q.lemmas, s.lemmas, shared)),
                float(self._ordered_pairs(q.lemmas, s.lemmas, shared)),
                self._tesserae(q.lemmas, s.lemmas, shared), char3]

    @staticmethod
    def _same_pos_from_end(a: tuple, b: tuple, shared: set) -> int:
        """Shared lemmas standing at the same distance from the end of both segments (any occurrence)."""
        if not shared:
            return 0
        pa = {(len(a) - 1 - i, w) for i, w in enumerate(a) if w in shared}
        pb = {(len(b) - 1 - i, w) for i, w in enumerate(b) if w in shared}
        return len({w for _, w in pa & pb})

    def _ordered_pairs(self, a: tuple, b: tuple, shared: set) -> int:
        """Ordered pairs (x, y), x ≠ y, with x before y within ``gap`` content words on both sides."""
        if len(shared) < 2:
            return 0

        def pairs(seq):
            out = set()
            for i, x in enumerate(seq):
                if x not in shared:
                    continue
                for y in seq[i + 1:i + 1 + self.gap]:
                    if y in shared and y != x:
                        out.add((x, y))
            return out

        return len(pairs(a) & pairs(b))

    def _tesserae(self, a: tuple, b: tuple, shared: set) -> float:
        if len(shared) < 2:
            return 0.0
        freq = self._freq
        unk = self._freq_unknown

        def side(seq):
            pos = [(freq.get(w, unk), i) for i, w in enumerate(seq) if w in shared]
            inv = sum(1.0 / f for f, _ in pos)
            two = sorted(pos)[:2]
            return inv, abs(two[0][1] - two[1][1]) + 1

        inv_a, d_a = side(a)
        inv_b, d_b = side(b)
        return math.log((inv_a + inv_b) / (d_a + d_b))

    # ------------------------------------------------------------------------------------------ persistence
    def state(self) -> dict:
        """Everything needed to rebuild the fitted featurizer, as JSON-safe data (no pickle)."""
        def vec(v):
            return {"vocabulary": {k: int(i) for k, i in v.vocabulary_.items()}, "idf": v.idf_.tolist()}

        return {"rare_df": self.rare_df, "gap": self.gap, "use_embedding": self.use_embedding,
                "vectors": self.vectors, "sif": self._sif.state() if self._sif is not None else None,
                "v1": vec(self._v1), "v12": vec(self._v12), "vc": vec(self._vc), "df": self._df,
                "freq": self._freq, "freq_unknown": self._freq_unknown, "idf_unknown": self._idf_unknown}

    @classmethod
    def from_state(cls, state: dict, cache_dir=None) -> PairFeaturizer:
        from sklearn.feature_extraction.text import TfidfVectorizer

        f = cls(state["rare_df"], state["gap"], state["use_embedding"], cache_dir=cache_dir,
                vectors=state.get("vectors"))
        if f.vectors is not None:
            from detection.methods.semantic.static_semantic import SegmentEncoder

            f._sif = SegmentEncoder.from_state(f._word_vectors(), state["sif"])
        specs = {"v1": {"token_pattern": r"\S+", "ngram_range": (1, 1)},
                 "v12": {"token_pattern": r"\S+", "ngram_range": (1, 2)},
                 "vc": {"analyzer": "char_wb", "ngram_range": (3, 4)}}
        for key, kw in specs.items():
            v = TfidfVectorizer(sublinear_tf=True, dtype=np.float32, vocabulary=state[key]["vocabulary"], **kw)
            v.idf_ = np.asarray(state[key]["idf"], np.float64)
            setattr(f, "_" + key, v)
        f._df = {k: int(c) for k, c in state["df"].items()}
        n_docs = math.exp(state["idf_unknown"] - 1.0) - 1
        f._idf = {w: math.log((1 + n_docs) / (1 + c)) + 1.0 for w, c in f._df.items()}
        f._idf_unknown = state["idf_unknown"]
        f._freq = dict(state["freq"])
        f._freq_unknown = state["freq_unknown"]
        f._fitted = True
        return f
