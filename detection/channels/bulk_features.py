"""The source side of the multi-channel retriever, built in bulk.

:func:`.channels.features` turns one text into its features, a dictionary per channel; run on 40,000 source lines
it and :meth:`.channels.FeatureSpace.matrix` took 9 of the 15 CPU-seconds of a fit (``perf/channels_bench.py``).
:func:`source_index` gives the same term-major matrices for all the sources at once: each token is coded by its
form and lemma, each channel's features are integer keys per token (numpy), a source keeps a feature once at its
greatest weight, and only the distinct features become the strings the query side looks up. The values are the
ones the per-text path computes, with the same float64 arithmetic cast to float32 (the sound vectors' norms are
summed in the same order with Python's ``sum``), so the scores do not change;
``tests/detection/methods/test_channel_index.py`` compares the two on real lines.

:class:`LazyFeatures` gives a source's :class:`.channels.ChannelFeatures` by the per-text path when an explanation
asks for it, and :class:`VariantIndex` keeps the sources' deletion neighbourhoods so a search finds the
orthographic variants of its query words without rebuilding them over every source form.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from detection.channels import channel_features as C
from detection.latin.stopwords import LATIN_STOPWORDS


@dataclass
class SourceIndex:
    """Per sparse channel the (features x sources) CSR weights, the feature vocabularies (a
    :class:`.channels.FeatureSpace`), the sound channel's trigram idf and every source's content-lemma postings."""

    space: C.FeatureSpace
    matrices: dict[str, sp.csr_matrix]
    sound_idf: dict[str, float]
    lemma_postings: sp.csr_matrix  # content lemmas x sources, the lemma vocabulary's rows (weights > 0 only)


class _Coded:
    """Every token of the sources as integer codes (form, lemma, source, line, position in its source)."""

    def __init__(self, docs: Sequence[C.Doc]):
        lines_t = [lt for d in docs for lt in d.lines_tokens]
        lines_l = [ll for d in docs for ll in d.lines_lemmas]
        flat_t, flat_l = list(chain.from_iterable(lines_t)), list(chain.from_iterable(lines_l))
        self.forms, self.lemmas = list(dict.fromkeys(flat_t)), list(dict.fromkeys(flat_l))
        self.form_ids = {t: i for i, t in enumerate(self.forms)}
        self.lemma_ids = {x: i for i, x in enumerate(self.lemmas)}
        self.form = np.fromiter(map(self.form_ids.__getitem__, flat_t), np.int64, len(flat_t))
        self.lemma = np.fromiter(map(self.lemma_ids.__getitem__, flat_l), np.int64, len(flat_l))
        line_len = np.fromiter(map(len, lines_t), np.int64, len(lines_t))
        lines_per_doc = np.fromiter((len(d.lines_tokens) for d in docs), np.int64, len(docs))
        line_doc = np.repeat(np.arange(len(docs), dtype=np.int64), lines_per_doc)
        doc_len_a = np.bincount(line_doc, weights=line_len, minlength=len(docs)).astype(np.int64)
        self.n_docs = len(docs)
        self.doc = np.repeat(np.arange(self.n_docs, dtype=np.int64), doc_len_a)
        starts = np.concatenate([[0], np.cumsum(doc_len_a)[:-1]]).astype(np.int64)
        self.pos = np.arange(self.form.size, dtype=np.int64) - np.repeat(starts, doc_len_a)
        self.line = np.repeat(np.arange(len(line_len), dtype=np.int64), line_len)
        stop_form = np.fromiter((f in LATIN_STOPWORDS or len(f) <= 1 for f in self.forms), bool, len(self.forms))
        stop_lemma = np.fromiter((x in LATIN_STOPWORDS for x in self.lemmas), bool, len(self.lemmas))
        self.content = ~stop_form[self.form] & ~stop_lemma[self.lemma]  # C.is_content, token by token


def _matrix(doc, key, weight, names, vocab: dict[str, int], n_docs: int) -> sp.csr_matrix:
    """(features x sources) CSR from one entry per (source, integer key, weight): weights <= 0 dropped (the
    per-text path never stores them), the distinct keys named by ``names(keys)`` (a list of strings) and numbered
    in ``vocab`` (grown), each (source, feature) kept once at its greatest weight."""
    keep = weight > 0
    doc, key, weight = doc[keep], key[keep], weight[keep]
    uniq, inv = np.unique(key, return_inverse=True)
    named = names(uniq) if uniq.size else []
    fresh = not vocab
    if fresh:
        vocab.update(zip(named, range(len(named))))
    if fresh and len(vocab) == len(named):  # a fresh vocabulary and every name distinct
        cols = np.arange(len(named), dtype=np.int64)
    else:
        cols = np.fromiter((vocab.setdefault(x, len(vocab)) for x in named), np.int64, len(named))
    col = cols[inv.ravel()] if uniq.size else np.zeros(0, np.int64)
    order = np.lexsort((-weight, doc, col))  # by feature, source, weight descending: the first of a pair is kept
    col, doc, weight = col[order], doc[order], weight[order]
    first = np.ones(col.size, bool)
    first[1:] = (col[1:] != col[:-1]) | (doc[1:] != doc[:-1])
    col, doc, weight = col[first], doc[first], weight[first]
    n_rows = max(len(vocab), 1)
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(col, minlength=n_rows), out=indptr[1:])
    return sp.csr_matrix((weight.astype(np.float32), doc.astype(np.int32), indptr), shape=(n_rows, n_docs))


def source_index(docs: Sequence[C.Doc], rarity: C.Rarity, *, rare_min: float, channels: Sequence[str]
                 ) -> SourceIndex:
    """Every sparse channel in ``channels`` for the sources ``docs``: the matrices :func:`.channels.features`
    (``side="source"``, empty relations) and :meth:`.channels.FeatureSpace.matrix` build text by text, transposed."""
    x = _Coded(docs)
    n = x.n_docs
    space = C.FeatureSpace()
    rar = np.fromiter((rarity(lem) for lem in x.lemmas), np.float64, len(x.lemmas))
    r = rar / C.SCALE
    ct = np.flatnonzero(x.content)
    c_doc, c_form, c_lemma = x.doc[ct], x.form[ct], x.lemma[ct]
    def lemma_name(keys):
        return [x.lemmas[i] for i in keys.tolist()]

    def form_name(keys):
        return [x.forms[i] for i in keys.tolist()]

    def build(ch, doc, key, weight, name):
        return _matrix(doc, key, weight, name, space.vocab[ch], n)

    lemma_postings = build("lemma", c_doc, c_lemma, r[c_lemma], lemma_name)
    out: dict[str, sp.csr_matrix] = {}
    for ch in channels:
        if ch in ("lemma", "synonym"):  # a source lemma is indexed as itself in both: the same features
            out[ch] = lemma_postings
            space.vocab[ch] = dict(space.vocab["lemma"])
        elif ch == "rare":
            sel = rar[c_lemma] >= rare_min
            out[ch] = build(ch, c_doc[sel], c_lemma[sel], r[c_lemma[sel]], lemma_name)
        elif ch in ("form", "edit"):  # a source form is indexed as itself in both
            other = "edit" if ch == "form" else "form"
            if other in out:
                out[ch] = out[other]
                space.vocab[ch] = dict(space.vocab[other])
            else:
                out[ch] = build(ch, c_doc, c_form, r[c_lemma], form_name)
        elif ch == "quote":
            out[ch] = _quote(x, space.vocab[ch])
        elif ch == "order":
            out[ch] = _order(x, ct, rar, space.vocab[ch])
        elif ch == "position":
            out[ch] = _position(x, ct, r, space.vocab[ch])
    sound_idf, snd = _sound(x, ct, space.vocab["sound"], "sound" in channels)
    if snd is not None:
        out["sound"] = snd
    return SourceIndex(space, out, sound_idf, lemma_postings)


def _quote(x: _Coded, vocab) -> sp.csr_matrix:
    """Runs of three consecutive tokens of a source (stopwords included, across its lines), weight 1."""
    start = np.flatnonzero(x.doc[:-2] == x.doc[2:]) if x.form.size >= 3 else np.zeros(0, np.int64)
    nf = max(len(x.forms), 1)
    key = (x.form[start] * nf + x.form[start + 1]) * nf + x.form[start + 2]
    forms = x.forms

    def name(keys):
        ab, c = np.divmod(keys, nf)
        a, b = np.divmod(ab, nf)
        return [f"{forms[i]} {forms[j]} {forms[m]}" for i, j, m in zip(a.tolist(), b.tolist(), c.tolist())]

    return _matrix(x.doc[start], key, np.ones(start.size), name, vocab, x.n_docs)


def _order(x: _Coded, ct, rar, vocab) -> sp.csr_matrix:
    """Two different content lemmas at most ``ORDER_SPAN`` tokens apart, in their order."""
    docs, keys, weights = [], [], []
    nl = max(len(x.lemmas), 1)
    pos, doc, lem = x.pos[ct], x.doc[ct], x.lemma[ct]
    for s in range(1, C.ORDER_SPAN + 1):  # the s-th next content token (positions increase: s <= span)
        a = np.arange(ct.size - s)
        b = a + s
        ok = (doc[a] == doc[b]) & (pos[b] - pos[a] <= C.ORDER_SPAN) & (lem[a] != lem[b])
        a, b = a[ok], b[ok]
        docs.append(doc[a])
        keys.append(lem[a] * nl + lem[b])
        weights.append((rar[lem[a]] + rar[lem[b]]) / (2 * C.SCALE))
    lemmas = x.lemmas

    def name(keys):
        a, b = np.divmod(keys, nl)
        return [f"{lemmas[i]}>{lemmas[j]}" for i, j in zip(a.tolist(), b.tolist())]

    return _matrix(np.concatenate(docs), np.concatenate(keys), np.concatenate(weights), name, vocab, x.n_docs)


def _position(x: _Coded, ct, r, vocab) -> sp.csr_matrix:
    """The first and the last content lemma of every line (``S:`` and ``E:``)."""
    line = x.line[ct]
    if ct.size == 0:
        return _matrix(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), list, vocab, x.n_docs)
    last = np.ones(ct.size, bool)
    last[:-1] = line[:-1] != line[1:]
    first = np.ones(ct.size, bool)
    first[1:] = line[1:] != line[:-1]
    lem, doc = x.lemma[ct], x.doc[ct]
    key = np.concatenate([lem[last] * 2, lem[first] * 2 + 1])
    lemmas = x.lemmas

    def name(keys):
        a, s = np.divmod(keys, 2)
        return [("S:" if side else "E:") + lemmas[i] for i, side in zip(a.tolist(), s.tolist())]

    return _matrix(np.concatenate([doc[last], doc[first]]), key, r[key // 2], name, vocab, x.n_docs)


def _sound(x: _Coded, ct, vocab, build: bool):
    """The trigram idf table (:func:`.channels.sound_idf_table`) and, when ``build``, the unit-length
    rarity-weighted trigram vectors (:func:`.channels.weigh_sound`) as a matrix."""
    tri_ids: dict[str, int] = {}
    per_form = [[tri_ids.setdefault(g, len(tri_ids)) for g in C.char_trigrams(f)] for f in x.forms]
    lens = np.fromiter((len(t) for t in per_form), np.int64, len(per_form))
    flat = np.fromiter((g for t in per_form for g in t), np.int64, int(lens.sum()))
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    f = x.form[ct]
    n_occ = lens[f]
    total = int(n_occ.sum())
    occ_start = np.concatenate([[0], np.cumsum(n_occ)[:-1]]).astype(np.int64)
    idx = np.repeat(starts[f] - occ_start, n_occ) + np.arange(total, dtype=np.int64)
    tri = flat[idx]  # every trigram occurrence of the content tokens, in text order
    doc = np.repeat(x.doc[ct], n_occ)
    nt = max(len(tri_ids), 1)
    pair, first, count = np.unique(doc * nt + tri, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # a source's trigrams in the order they first occur
    pair, count = pair[order], count[order].astype(np.float64)
    p_doc, p_tri = pair // nt, pair % nt
    n = max(x.n_docs, 1)
    df = np.bincount(p_tri, minlength=nt)
    names = list(tri_ids)
    idf_arr = np.zeros(nt, np.float64)
    sound_idf = {}
    for g, c in enumerate(df[:len(names)].tolist()):
        if 0 < c <= n / 5:  # trigrams in more than a fifth of the texts carry no sound of their own
            idf_arr[g] = sound_idf[names[g]] = math.log(n / c)
    if not build:
        return sound_idf, None
    v = count * idf_arr[p_tri]
    sq = (v * v).tolist()
    bounds = np.searchsorted(p_doc, np.arange(x.n_docs + 1)).tolist()
    norm = np.asarray([math.sqrt(sum(sq[bounds[j]:bounds[j + 1]])) or 1.0 for j in range(x.n_docs)], np.float64)
    weight = v / norm[p_doc] if v.size else v
    return sound_idf, _matrix(p_doc, p_tri, weight, lambda keys: [names[i] for i in keys.tolist()], vocab, x.n_docs)


class LazyFeatures:
    """A source's :class:`.channels.ChannelFeatures` (words included, sound weighed), computed by the per-text
    path the first time an explanation asks for it."""

    def __init__(self, docs: Sequence[C.Doc], rarity: C.Rarity, rare_min: float, sound_idf: dict[str, float]):
        self._docs, self._rarity, self._rare_min, self._idf = docs, rarity, rare_min, sound_idf
        self._done: dict[int, C.ChannelFeatures] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def __getitem__(self, j: int) -> C.ChannelFeatures:
        cf = self._done.get(j)
        if cf is None:
            cf = C.features(self._docs[j], self._rarity, rare_min=self._rare_min, side="source",
                            synonyms=C.Relation(), variants=C.Relation())
            C.weigh_sound(cf, self._idf)
            self._done[j] = cf
        return cf


class VariantIndex:
    """The deletion neighbourhoods of the source forms (:func:`.channels.edit_relation`'s keys), kept from the fit.

    :meth:`relation` gives each query form the source forms one edit from it (after assimilation): the pairs
    :func:`.channels.edit_relation` finds over the query and source forms together, less the ones between two
    query forms, which no source feature can match."""

    def __init__(self, forms, *, min_len: int = 5):
        self.min_len = min_len
        self._keys: dict[str, list[str]] = defaultdict(list)
        self._assim: dict[str, str] = {}
        for w in sorted({f for f in forms if len(f) >= min_len}):
            a = self._assim[w] = C.assimilated(w)
            for key in self._keys_of(a):
                self._keys[key].append(w)

    @staticmethod
    def _keys_of(a: str):
        yield "=" + a
        yield a
        for i in range(len(a)):
            yield a[:i] + a[i + 1:]

    def relation(self, forms) -> C.Relation:
        out = {}
        for w in sorted({f for f in forms if len(f) >= self.min_len}):
            a = C.assimilated(w)
            found = set()
            for key in set(self._keys_of(a)):
                found.update(self._keys.get(key, ()))
            others = sorted(g for g in found if g != w and C._one_edit(a, self._assim[g]))
            if others:
                out[w] = frozenset(others)
        return C.Relation(out)
