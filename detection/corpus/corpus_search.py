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

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from numba import njit

from detection.latin.normalize import latin_share
from detection.methods.lexical import channels as C

from .corpus_index import CHANNEL_MATRIX, ChannelSettings, CorpusIndex, feature_hashes

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


def check_query(text: str) -> str:
    text = " ".join(str(text or "").split())
    if not text:
        raise QueryError("the query is empty: type or paste a Latin passage")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query has {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
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
        from detection.methods.semantic.static_semantic import SegmentEncoder

        self.encoder = SegmentEncoder.from_state(settings.wv, index.manifest["encoder"])
        self._keys = list(settings.wv.keys)

    # ---------------------------------------------------------------------------------------- query side
    def query_features(self, text: str):
        doc = C.analyse([text])[0]
        syn = self.index.synonyms(doc.lemmas, self._keys) if "synonym" in self.weights else None
        var = self.index.variants(doc.tokens) if "edit" in self.weights else None
        qf = C.features(doc, self.settings.rarity, rare_min=self.settings.rare_min, side="query", synonyms=syn,
                        variants=var)
        C.weigh_sound(qf, self.index.sound_idf(qf.feats["sound"]))
        return doc, qf

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

    def search(self, text: str, k: int = 20, *, filters: Filters | None = None, explain: int = 20,
               checked: bool = False) -> tuple[list[Hit], dict]:
        """The top ``k`` segments for the passage ``text`` (best first), the first ``explain`` explained; and
        the query's analysis (its words and which ones matched)."""
        text = text if checked else check_query(text)
        doc, qf = self.query_features(text)
        keep = self.allowed(filters)
        n = self.index.n
        depth = max(int(k), self.settings.budget)
        per_channel: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        touched_all = {}
        try:
            for ch in self.sparse:
                t = touched_all[ch] = self._walk(ch, qf.feats[ch])
                vals = self._acc[ch][t]
                if ch == "lemma":  # Tesserae's rule: two shared lemmas at least
                    vals = np.where(self._cnt[ch][t] >= 2, vals, np.float32(0))
                per_channel[ch] = (t, vals)
        finally:
            for ch, t in touched_all.items():
                self._reset(ch, t)
        sem = None
        if "semantic" in self.weights:
            content = [[lem for tok, lem in zip(doc.tokens, doc.lemmas) if C.is_content(lem, tok)]]
            qv = self.encoder.encode(content).astype(np.float32)[0]
            sem = np.empty(n, np.float32)
            for part in self.index.parts:
                np.maximum(part.semantic @ qv, 0.0, out=sem[part.start:part.start + part.n])
        fused = np.zeros(n, np.float32) if sem is None else np.float32(self.weights["semantic"]) * sem
        for ch, (t, vals) in per_channel.items():
            fused[t] += np.float32(self.weights[ch]) * vals
        if keep is not None:
            fused[~keep] = -np.inf
        lists = list(per_channel.values()) + ([(np.arange(n), sem)] if sem is not None else [])
        segs, ranks = [], []
        for t, v in lists:  # every channel's own top list (score > 0), as deep as the budget
            ok = v > 0
            if keep is not None:
                ok &= keep[t]
            t, v = t[ok], v[ok]
            if t.size > depth:
                sel = np.argpartition(-v, depth - 1)[:depth]
                t, v = t[sel], v[sel]
            segs.append(t[np.lexsort((t, -v))])
            ranks.append(np.arange(segs[-1].size))
        cand = np.zeros(0, np.int64)
        if segs:  # round robin: a segment's best rank in any list, equal ranks by index, up to the budget
            S, R = np.concatenate(segs).astype(np.int64), np.concatenate(ranks)
            o = np.lexsort((R, S))
            S, R = S[o], R[o]
            first = np.ones(S.size, bool)
            first[1:] = S[1:] != S[:-1]
            S, R = S[first], R[first]
            cand = S[np.lexsort((S, R))][:depth]
        if cand.size < depth:  # the channels' lists ran out: the best fused scores of the rest
            rest = fused.copy()
            rest[cand] = -np.inf
            more = np.flatnonzero(rest > 0)
            more = more[np.lexsort((more, -rest[more]))][:depth - cand.size]
            cand = np.concatenate([cand, more])
        top = cand[np.lexsort((cand, -fused[cand]))][:k] if cand.size else cand
        channel_scores = {}
        for ch, (t, vals) in per_channel.items():
            o = np.argsort(t)
            ts, vs = t[o], vals[o]
            pos = np.minimum(np.searchsorted(ts, top), max(ts.size - 1, 0))
            channel_scores[ch] = np.where(ts[pos] == top, vs[pos], 0.0) if ts.size else np.zeros(top.size)
        if sem is not None:
            channel_scores["semantic"] = sem[top]
        hits = []
        for r, s in enumerate(top.tolist()):
            wi = self.index.work_of(s)
            hit = Hit(s, float(fused[s]), self.index.works[wi], self.index.ref(s), self.index.citation(s),
                      self.index.text(s), {ch: round(float(v[r]), 6) for ch, v in channel_scores.items()})
            if r < explain:
                hit.explanation = self.explain(qf, hit)
            hits.append(hit)
        return hits, {"text": text, "tokens": doc.tokens, "n_segments": n}

    # ---------------------------------------------------------------------------------------- explaining
    def explain(self, qf: C.ChannelFeatures, hit: Hit) -> dict:
        """What each channel gave the hit: score, weight, contribution, matched word pairs (query, segment)."""
        sdoc = C.analyse([hit.text])[0]
        sf = C.features(sdoc, self.settings.rarity, rare_min=self.settings.rare_min, side="source",
                        synonyms=C.Relation(), variants=C.Relation())
        C.weigh_sound(sf, self.index.sound_idf(sf.feats["sound"]))
        out = []
        q_words, s_words = set(), set()
        for ch, score in hit.channels.items():
            if score <= 0:
                continue
            matches = []
            if ch in C.SPARSE_CHANNELS:
                shared = sorted(set(qf.feats[ch]) & set(sf.feats[ch]), key=lambda f: -qf.feats[ch][f] * sf.feats[ch][f])
                for f in shared:
                    pair = [qf.words[ch][f], sf.words[ch][f]]
                    if pair not in matches:
                        matches.append(pair)
                    if len(matches) >= 12:
                        break
                if ch != "sound":
                    for qw_, sw_ in matches:
                        q_words.update(qw_.split())
                        s_words.update(sw_.split())
            w = self.weights[ch]
            out.append({"name": ch, "score": round(score, 6), "weight": w, "contribution": round(w * score, 6),
                        "matches": matches})
        out.sort(key=lambda d: -d["contribution"])
        return {"channels": out, "query_words": sorted(q_words), "segment_words": sorted(s_words)}
