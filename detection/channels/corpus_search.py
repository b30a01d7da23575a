"""One passage against a whole corpus index (:mod:`.corpus_index`): every channel of the ``channels`` method,
its candidates (every channel's own top list, round robin under one budget, then the fused score) and each
hit's explanation (channels, weights, contributions, matched words).

A sparse channel's scores come from walking the postings of the query's features only (a compiled scatter-add
over the parts of the index); the semantic channel is one product of the query's vector with every segment's.
The scores are the channel's own (reference-corpus rarities, cosines), so a corpus search ranks as the
``channels`` method fitted on the corpus would, with two differences said here: the semantic encoder's common
component is fitted on the corpus's first part, and a single passage has no neighbouring query lines, so the
context term is 0.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from numba import njit

from detection.channels import channel_features as C
from detection.channels import fusion
from detection.channels.corpus_index import CHANNEL_MATRIX, ChannelSettings, CorpusIndex, feature_hashes
from detection.latin.normalize import latin_share

MAX_QUERY_CHARS = 400
MIN_LATIN_SHARE = 0.5


class QueryError(ValueError):
    """A query that cannot be searched (empty, too long, not Latin); the message says which."""


@njit(cache=True, nogil=True)
def _scatter(keys, ptr, seg, w, qkeys, qw, offset, acc, cnt, touched, n_touched):
    """Add ``qw[i] * w`` over the postings of every query feature found in ``keys`` (sorted) into ``acc``;
    count shared features in ``cnt``; list each newly touched segment in ``touched``."""
    nk = keys.size
    for i in range(qkeys.size):
        r = np.searchsorted(keys, qkeys[i])
        if r >= nk or keys[r] != qkeys[i]:
            continue
        for p in range(ptr[r], ptr[r + 1]):
            s = offset + seg[p]
            if cnt[s] == 0:
                touched[n_touched] = s
                n_touched += 1
            acc[s] += qw[i] * w[p]
            cnt[s] += 1
    return n_touched


HIST_BITS = 12


@njit(cache=True, nogil=True, fastmath=True)
def _dot8(X, q, out):
    """``out[i] = X[i] . q`` for int8 rows and an int8 query (int16 products, int32 sums)."""
    n, d = X.shape
    for i in range(n):
        acc = np.int32(0)
        for j in range(d):
            acc += np.int16(X[i, j]) * np.int16(q[j])
        out[i] = acc


@njit(cache=True, nogil=True)
def _top_positive(scores, depth, shift):
    """The indices of the ``depth`` largest positive scores (all of them when fewer), best first: a histogram of
    the scores (``score >> shift``) gives the threshold, one more pass collects those above it."""
    nb = 1 << HIST_BITS
    hist = np.zeros(nb + 1, np.int64)
    for s in scores:
        if s > 0:
            hist[min(s >> shift, nb)] += 1
    total, b = 0, nb
    while b > 0 and total + hist[b] < depth:
        total += hist[b]
        b -= 1
    over = np.empty(total + hist[b], np.int64)
    m = 0
    for i in range(scores.size):
        s = scores[i]
        if s > 0 and min(s >> shift, nb) >= b:
            over[m] = i
            m += 1
    over = over[:m]
    sel = np.argsort(-scores[over], kind="mergesort")[:depth]
    return over[sel]


def check_query(text: str) -> str:
    text = " ".join(str(text or "").split())
    if not text:
        raise QueryError("the query is empty: type or paste a Latin passage")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query has {len(text)} characters; the limit is {MAX_QUERY_CHARS}, about five verse "
                         "lines (a longer passage shares a word or two with almost every segment): search it a few "
                         "lines at a time")
    if latin_share(text) < MIN_LATIN_SHARE or not C.analyse([text])[0].tokens:
        raise QueryError("the query is not Latin text (Latin letters expected)")
    return text


@dataclass
class Filters:
    authors: Sequence[str] = ()
    works: Sequence[str] = ()
    genre: str = ""  # "", "verse" or "prose"
    exclude_works: Sequence[str] = ()


@dataclass
class Hit:
    index: int
    score: float
    work: dict
    ref: str
    citation: str
    text: str
    channels: dict[str, float]
    explanation: dict = field(default_factory=dict)


class CorpusSearcher:
    """Searches one loaded index with the configured channels; keeps its score buffers between searches."""

    def __init__(self, index: CorpusIndex, settings: ChannelSettings):
        self.index, self.settings = index, settings
        self.weights = settings.weights
        self.sparse = [c for c in C.SPARSE_CHANNELS if c in self.weights]
        n = index.n
        self._acc = {c: np.zeros(n, np.float32) for c in self.sparse}
        self._cnt = {c: np.zeros(n, np.int32) for c in self.sparse}
        self._touched = {c: np.zeros(n, np.int64) for c in self.sparse}
        self._sem_buf = np.zeros(n, np.int32)
        self._lock = threading.Lock()
        from dataclasses import replace

        from detection.methods.semantic.static_semantic import SegmentEncoder

        wv = settings.wv  # a float32 copy of the vectors: the encoder would convert a float16 table every query
        wv32 = replace(wv, vectors=np.asarray(wv.vectors, np.float32), index=wv.index)
        self.encoder = SegmentEncoder.from_state(wv32, index.manifest["encoder"])
        self._idf: dict[str, float] = {}
        self._keys = list(settings.wv.keys)

    # ---------------------------------------------------------------------------------------- query side
    def query_features(self, text: str):
        doc = C.analyse([text])[0]
        syn = self.index.synonyms(doc.lemmas, self._keys) if "synonym" in self.weights else None
        var = self.index.variants(doc.tokens) if "edit" in self.weights else None
        qf = C.features(doc, self.settings.rarity, rare_min=self.settings.rare_min, side="query", synonyms=syn,
                        variants=var)
        C.weigh_sound(qf, self.sound_idf(qf.feats["sound"]))
        return doc, qf

    def sound_idf(self, trigrams) -> dict[str, float]:
        """The index's idf of these trigrams (kept for later searches: a few 10,000 trigrams in all)."""
        todo = [g for g in trigrams if g not in self._idf]
        if todo:
            found = self.index.sound_idf(todo)
            self._idf.update({g: found.get(g, 0.0) for g in todo})
        return {g: self._idf[g] for g in trigrams}

    def _walk(self, ch: str, feats: dict[str, float]) -> np.ndarray:
        """The channel's scores of every touched segment: (touched segments, scores)."""
        acc, cnt, touched = self._acc[ch], self._cnt[ch], self._touched[ch]
        if not feats:
            return np.zeros(0, np.int64)
        names = list(feats)
        qk = feature_hashes(names)
        qw = np.asarray([feats[x] for x in names], np.float32)
        order = np.argsort(qk)
        qk, qw = qk[order], qw[order]
        n_t = 0
        for part in self.index.parts:
            keys, ptr, seg, w = part.mats[CHANNEL_MATRIX[ch]]
            n_t = _scatter(keys, ptr, seg, w, qk, qw, part.start, acc, cnt, touched, n_t)
        return touched[:n_t].copy()

    def _channel(self, ch: str, segs: np.ndarray) -> np.ndarray:
        """The channel's scores of ``segs`` (walked already); the lemma channel counts two shared lemmas at least
        (Tesserae's rule)."""
        v = self._acc[ch][segs]
        if ch == "lemma":
            v = np.where(self._cnt[ch][segs] >= 2, v, np.float32(0))
        return v

    def _fused(self, segs: np.ndarray, qv) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The fused score of ``segs`` (sum of weight x channel score) and every channel's score."""
        scores = {ch: self._channel(ch, segs) for ch in self.sparse}
        if qv is not None:
            scores["semantic"] = self._exact_semantic(qv, segs)
        fused = np.zeros(segs.size, np.float32)
        for ch, v in scores.items():
            fused += np.float32(self.weights[ch]) * v
        return fused, scores

    def _reset(self, ch: str, touched: np.ndarray) -> None:
        self._acc[ch][touched] = 0
        self._cnt[ch][touched] = 0

    # ---------------------------------------------------------------------------------------- search
    def allowed(self, filters: Filters | None) -> np.ndarray | None:
        """A mask of the segments the filters keep (None: every segment)."""
        if filters is None or not (filters.authors or filters.works or filters.genre or filters.exclude_works):
            return None
        keep = np.zeros(self.index.n, bool)
        for w in self.index.works:
            if filters.authors and w["author"] not in filters.authors:
                continue
            if filters.works and w["key"] not in filters.works:
                continue
            if filters.genre and w["genre"] != filters.genre:
                continue
            if w["key"] in filters.exclude_works:
                continue
            keep[w["start"]:w["start"] + w["n"]] = True
        return keep

    def _semantic_list(self, qv: np.ndarray, depth: int, keep) -> np.ndarray:
        """The segments of the semantic channel's own top list: an int8 scan of every segment (quantised unit
        vectors) and a histogram threshold; their exact cosines come from the float32 vectors."""
        from detection.channels.corpus_index import quantised

        q8 = quantised(qv)
        bound = 127 * int(np.abs(q8.astype(np.int64)).sum()) + 1
        for part in self.index.parts:
            _dot8(part.semantic8, q8, self._sem_buf[part.start:part.start + part.n])
        if keep is not None:
            self._sem_buf[~keep] = 0
        return _top_positive(self._sem_buf, depth, max(0, bound.bit_length() - HIST_BITS))

    def _exact_semantic(self, qv: np.ndarray, segs: np.ndarray) -> np.ndarray:
        out = np.zeros(segs.size, np.float32)
        for part in self.index.parts:
            m = (segs >= part.start) & (segs < part.start + part.n)
            if m.any():
                out[m] = np.maximum(part.semantic[segs[m] - part.start] @ qv, 0.0)
        return out

    def search(self, text: str, k: int = 20, *, filters: Filters | None = None, explain: int = 20,
               checked: bool = False) -> tuple[list[Hit], dict]:
        """The top ``k`` segments for the passage ``text`` (best first), the first ``explain`` explained; and
        the query's analysis (its words and which ones matched). One search at a time per searcher (its score
        buffers are shared): a threaded web server's requests wait for each other here."""
        text = text if checked else check_query(text)
        with self._lock:
            return self._search(text, k, filters, explain)

    def _search(self, text: str, k: int, filters: Filters | None, explain: int) -> tuple[list[Hit], dict]:
        doc, qf = self.query_features(text)
        keep = self.allowed(filters)
        depth = max(int(k), self.settings.budget)
        touched_all: dict[str, np.ndarray] = {}
        try:
            segs = []
            for ch in self.sparse:  # every sparse channel's own top list (score > 0), as deep as the budget
                t = touched_all[ch] = self._walk(ch, qf.feats[ch])
                v = self._channel(ch, t)
                ok = v > 0
                if keep is not None:
                    ok &= keep[t]
                t, v = t[ok], v[ok]
                if t.size > depth:
                    sel = np.argpartition(-v, depth - 1)[:depth]
                    t, v = t[sel], v[sel]
                segs.append(t[np.lexsort((t, -v))])
            qv = None
            if "semantic" in self.weights:
                content = [[lem for tok, lem in zip(doc.tokens, doc.lemmas) if C.is_content(lem, tok)]]
                qv = self.encoder.encode(content).astype(np.float32)[0]
                if np.any(qv):
                    t = self._semantic_list(qv, depth, keep)
                    v = self._exact_semantic(qv, t)
                    segs.append(t[np.lexsort((t, -v))])
            cand = np.zeros(0, np.int64)
            if segs:  # round robin: a segment's best rank in any list, equal ranks by index, up to the budget
                S = np.concatenate(segs).astype(np.int64)
                R = np.concatenate([np.arange(x.size) for x in segs])
                o = np.lexsort((R, S))
                S, R = S[o], R[o]
                first = np.ones(S.size, bool)
                first[1:] = S[1:] != S[:-1]
                S, R = S[first], R[first]
                cand = S[np.lexsort((S, R))][:depth]
            fused, scores = self._fused(cand, qv)
            if cand.size < depth and touched_all:  # the lists ran out: the best fused scores of the rest
                rest = np.setdiff1d(np.unique(np.concatenate(list(touched_all.values()))), cand)
                if keep is not None:
                    rest = rest[keep[rest]]
                f_rest, _ = self._fused(rest, qv)
                ok = f_rest > 0
                rest, f_rest = rest[ok], f_rest[ok]
                more = np.lexsort((rest, -f_rest))[:depth - cand.size]
                cand = np.concatenate([cand, rest[more]])
                fused, scores = self._fused(cand, qv)
            order = np.lexsort((cand, -fused))[:k] if cand.size else cand
            top, fused_top = cand[order], fused[order]
            channel_scores = {ch: v[order] for ch, v in scores.items()}
        finally:
            for ch, t in touched_all.items():
                self._reset(ch, t)
        hits = []
        for r, s in enumerate(top.tolist()):
            wi = self.index.work_of(s)
            hit = Hit(s, float(fused_top[r]), self.index.works[wi], self.index.ref(s), self.index.citation(s),
                      self.index.text(s), {ch: round(float(v[r]), 6) for ch, v in channel_scores.items()})
            if r < explain:
                hit.explanation = self.explain(doc, qf, hit)
            hits.append(hit)
        return hits, {"text": text, "tokens": doc.tokens, "n_segments": self.index.n}

    # ---------------------------------------------------------------------------------------- explaining
    def explain(self, doc: C.Doc, qf: C.ChannelFeatures, hit: Hit) -> dict:
        """The channels' one explanation (:func:`.fusion.explain`: score, weight, contribution, matched word pairs
        (query, segment), rarity), with the words to mark on each side (every channel's but sound's)."""
        sdoc = C.analyse([hit.text])[0]
        sf = C.features(sdoc, self.settings.rarity, rare_min=self.settings.rare_min, side="source",
                        synonyms=C.Relation(), variants=C.Relation())
        C.weigh_sound(sf, self.sound_idf(sf.feats["sound"]))
        ex = fusion.explain(doc, qf, sdoc, sf, hit.channels, self.weights, self.settings.rarity)
        pairs = [p for ch in ex["channels"] if ch["name"] != "sound" for p in ch["matches"]]
        ex["query_words"] = sorted({w for q, _ in pairs for w in q.split()})
        ex["segment_words"] = sorted({w for _, s in pairs for w in s.split()})
        return ex
