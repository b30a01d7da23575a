"""The channels of the multi-channel retriever: what each one matches between two texts, as sparse features.

Every sparse channel turns a text into weighted features; a channel's score for a pair is the sum, over the
features both texts have, of the feature's weight (one sparse product for all pairs), divided by
:data:`SCALE` so a shared rare word is worth about 1 in every channel. Weights are the **rarity** of words in a
reference corpus (``log(tokens / (count + 1))``; the Latin Library through the word vectors trained on it, or the
fitted texts when no reference is given), so scores are comparable across queries (no per-query rescaling).

Channels (Tesserae v6's list, in this project's pipeline :mod:`detection.latin.analysis`):

``lemma``     content lemmas shared, counted only when at least two are shared (Tesserae's rule)
``rare``      one shared lemma rarer than ``rare_min`` is enough
``form``      the same inflected form (content words)
``quote``     runs of three consecutive forms, stopwords included (a quotation)
``sound``     character trigrams of the content words (cosine of their rarity-weighted counts)
``edit``      orthographic variants: forms one edit apart or equal after assimilation (``adf``/``aff``,
              ``inm``/``imm``); ``u``/``v`` and ``i``/``j`` are equal already after normalisation
``synonym``   a lemma of one text is a synonym of a (different) lemma of the other (vectors' neighbours or a
              Tesserae synonym file chosen by name)
``order``     two content lemmas within three words of each other, in the same order in both texts
              (Tesserae's distance as a feature: near and ordered is what its distance rewards)
``position``  the same lemma at a line's end or a line's start in both texts (verse position)
``semantic``  cosine of SIF sentence vectors (static word vectors), dense
``encoder``   cosine of a configured sentence encoder's vectors, dense
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

from detection.latin.analysis import latin_lemmas, latin_tokens
from detection.latin.stopwords import LATIN_STOPWORDS

SPARSE_CHANNELS = ("lemma", "rare", "form", "quote", "sound", "edit", "synonym", "order", "position")
DENSE_CHANNELS = ("semantic", "encoder")
CHANNELS = SPARSE_CHANNELS + DENSE_CHANNELS
# the per-candidate signals a reranker may learn from (``Candidates.extra``): each channel's score (a channel the
# profile or a switch leaves off scores 0) and the context term, always these columns in this order
SIGNALS = tuple(f"channel_{c}" for c in (*CHANNELS, "context"))
SCALE = 10.0  # rarity of a word seen about once in 20,000 reference tokens
ORDER_SPAN = 3
_ASSIMILATION = (("adf", "aff"), ("adc", "acc"), ("adg", "agg"), ("adl", "all"), ("adp", "app"), ("adr", "arr"),
                 ("ads", "ass"), ("adt", "att"), ("adq", "acq"), ("conl", "coll"), ("conm", "comm"),
                 ("conr", "corr"), ("conb", "comb"), ("conp", "comp"), ("inl", "ill"), ("inm", "imm"),
                 ("inr", "irr"), ("inb", "imb"), ("inp", "imp"), ("obf", "off"), ("obp", "opp"), ("obc", "occ"),
                 ("subf", "suff"), ("subc", "succ"), ("subp", "supp"), ("subg", "sugg"), ("exs", "ex"))


_ASSIM_RE = re.compile("^(" + "|".join(raw for raw, _ in _ASSIMILATION) + ")")
_ASSIM_MAP = dict(_ASSIMILATION)


def assimilated(form: str) -> str:
    """The form with its prefix spelt assimilated (``adfero`` -> ``affero``), ``-quom`` archaic endings
    as ``-cum``."""
    m = _ASSIM_RE.match(form)
    if m:
        form = _ASSIM_MAP[m.group(1)] + form[m.end():]
    if form.endswith("quom"):
        form = form[:-4] + "cum"
    return form


@dataclass
class Doc:
    """One text's analysis: its lines' tokens and lemmas (a window has several lines)."""

    lines_tokens: list[list[str]]
    lines_lemmas: list[list[str]]

    @property
    def tokens(self) -> list[str]:
        return [t for line in self.lines_tokens for t in line]

    @property
    def lemmas(self) -> list[str]:
        return [t for line in self.lines_lemmas for t in line]


def analyse(texts: Sequence[str]) -> list[Doc]:
    """Texts (lines joined by newlines) -> :class:`Doc` (tokens and lemmas per line)."""
    docs = []
    for text in texts:
        lt = [latin_tokens(line) for line in str(text).split("\n")]
        lt = [t for t in lt if t] or [[]]
        docs.append(Doc(lt, [latin_lemmas(t) for t in lt]))
    return docs


def is_content(lemma: str, form: str) -> bool:
    return lemma not in LATIN_STOPWORDS and form not in LATIN_STOPWORDS and len(form) > 1


@dataclass
class Rarity:
    """Rarity of lemmas in a reference corpus: ``log(total / (count + 1))`` (unknown lemmas: the rarest)."""

    counts: Mapping[str, float]
    total: float
    source: str = "fitted texts"

    def __post_init__(self):
        self.total = max(float(self.total), 1.0)
        self._max = math.log(self.total)

    def __call__(self, lemma: str) -> float:
        c = self.counts.get(lemma)
        return self._max if c is None else max(math.log(self.total / (float(c) + 1.0)), 0.0)

    @classmethod
    def from_docs(cls, docs: Sequence[Doc]) -> "Rarity":
        counts: dict[str, float] = defaultdict(float)
        n = 0
        for d in docs:
            for lem in d.lemmas:
                counts[lem] += 1
                n += 1
        return cls(dict(counts), n, "fitted texts")


@dataclass
class Relation:
    """A word -> related words map (synonyms, orthographic variants), off the diagonal."""

    pairs: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def related(self, word: str) -> frozenset[str]:
        return self.pairs.get(word, frozenset())


def edit_relation(forms: Sequence[str], *, min_len: int = 5) -> Relation:
    """Forms one edit apart (substitution, insertion, deletion) or equal once assimilated, among ``forms``.

    Deletion neighbourhoods: two words one edit apart share a key (a word, or it with one letter deleted)."""
    keys: dict[str, set[str]] = defaultdict(set)
    words = sorted({f for f in forms if len(f) >= min_len})
    assim = {w: assimilated(w) for w in words}
    for w in words:
        a = assim[w]
        keys["=" + a].add(w)
        keys[a].add(w)
        for i in range(len(a)):
            keys[a[:i] + a[i + 1:]].add(w)
    out: dict[str, set[str]] = defaultdict(set)
    for group in keys.values():
        if len(group) > 1:
            for w in group:
                out[w].update(group)
    rel = {}
    for w, group in out.items():
        others = frozenset(g for g in group if g != w and _one_edit(assim[w], assim[g]))
        if others:
            rel[w] = others
    return Relation(rel)


def _one_edit(a: str, b: str) -> bool:
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        return sum(x != y for x, y in zip(a, b)) == 1
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1:]


_SYN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")


def read_synonym_csv(path) -> Relation:
    """A Tesserae synonym file (``headword,syn1,syn2,...`` a row; the headword may repeat itself): symmetric."""
    from detection.latin.normalize import normalize_text

    out: dict[str, set[str]] = defaultdict(set)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            words = [normalize_text(w).strip() for w in raw.strip().split(",")]
            words = [w for w in words if w and " " not in w]
            if len(words) < 2:
                continue
            head = words[0]
            for syn in words[1:]:
                if syn != head:
                    out[head].add(syn)
                    out[syn].add(head)
    return Relation({k: frozenset(v) for k, v in out.items()})


def _neighbour_file(store, wv, top: int, min_cos: float):
    """The neighbour table of ``wv`` in folder ``store`` (None without one): named by the vectors' manifest and
    vocabulary size, so vectors trained again under the same name get their own."""
    if not store:
        return None
    m = getattr(wv, "manifest", None) or {}
    key = hashlib.sha256(json.dumps([m, len(wv.keys), list(wv.keys[:50]), top, min_cos], sort_keys=True,
                                    default=str).encode()).hexdigest()[:16]
    return Path(store) / "neighbours" / f"{key}.json"


def _write_atomic(path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: the table is computed again next time


def check_synonym_name(name: str) -> str:
    if not isinstance(name, str) or not _SYN_NAME.match(name) or ".." in name:
        raise ValueError(f"synonym list name {str(name)[:40]!r}: letters, digits, '.', '_' and '-' only "
                         "(a name, not a path)")
    return name


_NEIGHBOURS: dict = {}  # id(word vectors) -> {lemma: its neighbours}, filled as lemmas are asked for


def vector_synonyms(wv, lemmas: Sequence[str], *, top: int = 5, min_cos: float = 0.6, store=None) -> Relation:
    """Synonyms from word vectors: two lemmas are related when one is among the other's ``top`` nearest
    neighbours in the whole vector vocabulary with cosine >= ``min_cos``. Computed for the ``lemmas`` given (the
    fitted and searched texts') but each one against the whole vocabulary, so a pair's relation does not depend
    on the other texts searched. Exact inner-product search (faiss ``IndexFlatIP``), neighbours kept per
    vectors for later searches, and in the folder ``store`` when given (a JSON table per vectors, so a later run
    searches only lemmas it has not met)."""
    vocab = sorted({w for w in lemmas if w in wv and w not in LATIN_STOPWORDS})
    if not vocab:
        return Relation({})
    cache = _NEIGHBOURS.setdefault(id(wv), {"index": None, "rows": {}})
    known = cache["rows"]
    path = _neighbour_file(store, wv, top, min_cos)
    todo = [w for w in vocab if w not in known]
    if todo and path is not None and not cache.get("read"):
        cache["read"] = True
        try:
            known.update({w: frozenset(n) for w, n in json.loads(path.read_text(encoding="utf-8")).items()})
        except (OSError, ValueError, AttributeError):
            pass  # no table yet (or an unreadable one: rewritten below)
        todo = [w for w in vocab if w not in known]
    if todo:
        U = np.ascontiguousarray(wv.unit_vectors(), dtype=np.float32)
        pos = {k: i for i, k in enumerate(wv.keys)}
        kk = min(top + 1, U.shape[0])
        try:
            import faiss

            if cache["index"] is None:
                cache["index"] = faiss.IndexFlatIP(U.shape[1])
                cache["index"].add(U)
            sims, idx = cache["index"].search(U[[pos[w] for w in todo]], kk)
        except ImportError:  # numpy: the same neighbours, slower
            sims_all = U[[pos[w] for w in todo]] @ U.T
            idx = np.argsort(-sims_all, axis=1, kind="stable")[:, :kk]
            sims = np.take_along_axis(sims_all, idx, axis=1)
        for x, w in enumerate(todo):
            known[w] = frozenset(wv.keys[j] for j, c in zip(idx[x], sims[x])
                                 if j >= 0 and c >= min_cos and wv.keys[j] != w)
        if path is not None:
            _write_atomic(path, json.dumps({w: sorted(n) for w, n in known.items()}, ensure_ascii=False))
    wanted = set(vocab)
    out: dict[str, set[str]] = defaultdict(set)
    for w in vocab:
        for other in known[w]:
            if other in wanted:
                out[w].add(other)
                out[other].add(w)
    return Relation({k: frozenset(v) for k, v in out.items()})


def char_trigrams(form: str) -> list[str]:
    w = f"_{form}_"
    return [w[i:i + 3] for i in range(len(w) - 2)]


@dataclass
class ChannelFeatures:
    """Per text, the features of every sparse channel: ``{channel: {feature: weight}}`` with the words each
    feature stands for (for explanations)."""

    feats: dict[str, dict[str, float]]
    words: dict[str, dict[str, str]]


def features(doc: Doc, rarity: Rarity, *, rare_min: float, side: str, synonyms: Relation | None,
             variants: Relation | None) -> ChannelFeatures:
    """The sparse features of ``doc``. The query side (``side="query"``) of ``synonym`` and ``edit`` carries the
    related words (a query word matches a source word it is related to), the source side the words."""
    f: dict[str, dict[str, float]] = {c: {} for c in SPARSE_CHANNELS}
    words: dict[str, dict[str, str]] = {c: {} for c in SPARSE_CHANNELS}

    def put(ch, key, w, word):
        if w > f[ch].get(key, 0.0):
            f[ch][key] = w
            words[ch][key] = word

    toks, lems = doc.tokens, doc.lemmas
    for tok, lem in zip(toks, lems):
        if not is_content(lem, tok):
            continue
        r = rarity(lem) / SCALE
        put("lemma", lem, r, tok)
        if rarity(lem) >= rare_min:
            put("rare", lem, r, tok)
        put("form", tok, r, tok)
        for g in char_trigrams(tok):
            f["sound"][g] = f["sound"].get(g, 0.0) + 1.0
            words["sound"].setdefault(g, tok)
        for channel, table, key in (("synonym", synonyms, lem), ("edit", variants, tok)):
            if table is not None:  # a query word reaches its related keys; a source word is indexed as itself
                for k in (table.related(key) if side == "query" else (key,)):
                    put(channel, k, r, tok)
    for a in range(len(toks) - 2):
        key = " ".join(toks[a:a + 3])
        put("quote", key, 1.0, key)
    content = [(i, lem, tok) for i, (tok, lem) in enumerate(zip(toks, lems)) if is_content(lem, tok)]
    for x in range(len(content)):
        i, la, ta = content[x]
        for y in range(x + 1, len(content)):
            j, lb, tb = content[y]
            if j - i > ORDER_SPAN:
                break
            if la != lb:
                put("order", f"{la}>{lb}", (rarity(la) + rarity(lb)) / (2 * SCALE), f"{ta} {tb}")
    for lt, ll in zip(doc.lines_tokens, doc.lines_lemmas):
        cont = [(t, lem) for t, lem in zip(lt, ll) if is_content(lem, t)]
        if cont:
            put("position", "E:" + cont[-1][1], rarity(cont[-1][1]) / SCALE, cont[-1][0])
            put("position", "S:" + cont[0][1], rarity(cont[0][1]) / SCALE, cont[0][0])
    return ChannelFeatures(f, words)


def weigh_sound(cf: ChannelFeatures, idf: Mapping[str, float]) -> None:
    """Trigram counts -> unit-length rarity-weighted vector (cosine by a product); in place."""
    snd = {g: c * idf.get(g, 0.0) for g, c in cf.feats["sound"].items()}
    norm = math.sqrt(sum(v * v for v in snd.values())) or 1.0
    cf.feats["sound"] = {g: v / norm for g, v in snd.items() if v > 0}


class FeatureSpace:
    """Feature vocabularies shared by both sides; rows of a channel's sparse matrix for a list of texts."""

    def __init__(self):
        self.vocab: dict[str, dict[str, int]] = {c: {} for c in SPARSE_CHANNELS}

    def matrix(self, channel: str, rows: Sequence[ChannelFeatures], *, grow: bool) -> sp.csr_matrix:
        vocab = self.vocab[channel]
        indptr, indices, data = [0], [], []
        for cf in rows:
            for key, w in cf.feats[channel].items():
                j = vocab.get(key)
                if j is None:
                    if not grow:
                        continue
                    j = vocab[key] = len(vocab)
                indices.append(j)
                data.append(w)
            indptr.append(len(indices))
        return sp.csr_matrix((np.asarray(data, np.float32), np.asarray(indices, np.int32),
                              np.asarray(indptr, np.int64)), shape=(len(rows), max(len(vocab), 1)))


#: the sound channel's statistic: a trigram in more than this share of the indexed texts carries no sound of its own
#: (``log(N / df)`` above it, 0 past it). The method's; an index may set its own (the corpus index's default).
METHOD_SOUND_CAP = 0.2


def sound_idf_table(docs_feats: Sequence[ChannelFeatures], cap: float = METHOD_SOUND_CAP) -> dict[str, float]:
    df: dict[str, int] = defaultdict(int)
    for cf in docs_feats:
        for g in cf.feats["sound"]:
            df[g] += 1
    n = max(len(docs_feats), 1)
    return {g: math.log(n / c) for g, c in df.items() if c <= n * cap}
