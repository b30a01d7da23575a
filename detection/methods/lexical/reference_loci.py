"""Corpus uniqueness over a reference corpus: which loci of The Latin Library hold each content lemma.

The question a philologist asks of a parallel first: *how many other passages share these words?* The
``channels`` retriever answers it over this index when it is there (shipped in ``data/reference/``), else over
the searched sources (with a note).

**Loci.** Every text file of the corpus is cleaned as a Latin Library page (:func:`detection.latin.library_text
.clean_page`); a cleaned line of at most :data:`LONG` tokens (a verse line, a short prose line) is one locus, a
longer one (a prose paragraph) is cut after each sentence end (``.``, ``?``, ``!``, ``;``) and, where a sentence
is still longer, into pieces of :data:`LONG` tokens. Words are analysed as the channels analyse them
(:func:`detection.latin.analysis.latin_tokens`, :func:`~detection.latin.analysis.latin_lemmas`, the content test
of :func:`detection.channels.channel_features.is_content`), so a lemma here is a lemma there.

**Index** (a folder: ``manifest.json``, ``lemmas.txt`` one lemma a line, ``offsets.npy`` uint32, ``postings.npy``
uint8, ``sizes.npy`` uint8: each locus's number of distinct content lemmas): for each content lemma the sorted
ids of the loci holding it, stored as gaps in a variable-byte code (7 bits a byte, the high bit set on every
byte but a number's last). Exact: a posting list decodes to the same ids.

**Uniqueness** of a parallel (:meth:`LociIndex.uniqueness`): the loci that hold every content lemma the two
texts share, less the parallel's own lines where the reference has them (The Latin Library holds Virgil and
Lucan): a locus whose content lemmas are exactly those of one of the pair's lines is that line (or a verbatim
quotation of it). 0 means no other passage of the reference corpus has these words together.
"""
from __future__ import annotations

import json
import re
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

INDEX_NAME = "latin-library-loci"
SHIPPED_DIR = Path(__file__).resolve().parents[3] / "data" / "reference"
LONG = 30  # tokens: a longer line is cut at sentence ends, a longer sentence into pieces of this many
_SENTENCE_END = re.compile(r"(?<=[.?!;])\s+")
FORMAT = 1


class ReferenceError(ValueError):
    """A missing or malformed reference index."""


# --------------------------------------------------------------------------------------------- building
def loci_of_line(tokens: Sequence[str], text: str, tokenize: Callable[[str], list[str]]) -> list[list[str]]:
    """A cleaned line's loci as token lists: the line itself when short, else its sentences cut at
    :data:`LONG` tokens."""
    if len(tokens) <= LONG:
        return [list(tokens)] if tokens else []
    out = []
    for sentence in _SENTENCE_END.split(text):
        toks = tokenize(sentence)
        out.extend(toks[i:i + LONG] for i in range(0, len(toks), LONG) if toks[i:i + LONG])
    return out


def encode_gaps(ids: np.ndarray) -> np.ndarray:
    """Sorted unique ids -> the variable-byte code of their gaps (first id as its own gap)."""
    gaps = np.diff(np.asarray(ids, np.int64), prepend=0).astype(np.uint64)
    if gaps.size == 0:
        return np.zeros(0, np.uint8)
    nbytes = np.ones(gaps.size, np.int64)
    for k in range(1, 5):
        nbytes += gaps >= (1 << (7 * k))
    total = int(nbytes.sum())
    out = np.empty(total, np.uint8)
    starts = np.cumsum(nbytes) - nbytes
    for k in range(int(nbytes.max())):
        has = nbytes > k
        byte = (gaps[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = nbytes[has] > k + 1
        out[starts[has] + k] = (byte | np.where(more, np.uint64(0x80), np.uint64(0))).astype(np.uint8)
    return out


def decode_gaps(code: np.ndarray) -> np.ndarray:
    """The ids :func:`encode_gaps` coded (int64, sorted)."""
    code = np.asarray(code, np.uint8)
    if code.size == 0:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(code < 0x80)
    starts = np.concatenate(([0], ends[:-1] + 1))
    lengths = ends - starts + 1
    shift = 7 * (np.arange(code.size, dtype=np.int64) - np.repeat(starts, lengths))
    parts = (code & 0x7F).astype(np.int64) << shift
    return np.cumsum(np.add.reduceat(parts, starts))


def build_index(corpus, out_dir, *, cache_dir=None, progress: Callable[[float, str], None] | None = None) -> dict:
    """Index the loci of ``corpus`` (a folder, text file or tar archive of Latin Library pages) into ``out_dir``;
    returns the manifest."""
    from detection.channels.channel_features import is_content
    from detection.latin.analysis import latin_tokens
    from detection.latin.lemmatize import lemmatize_corpus
    from detection.latin.library_text import clean_page

    from ..semantic.word_vectors import corpus_documents

    t0 = time.perf_counter()
    loci: list[list[str]] = []
    n_files = 0
    for _name, text in corpus_documents(corpus):
        n_files += 1
        for line in clean_page(text):
            loci.extend(loci_of_line(latin_tokens(line), line, latin_tokens))
        if progress and n_files % 200 == 0:
            progress(0.4 * min(n_files / 2200, 1.0), f"{n_files} files, {len(loci):,} loci")
    if not loci:
        raise ReferenceError(f"no Latin text in {corpus}")
    lemmas = lemmatize_corpus(loci, cache_dir=cache_dir)
    if progress:
        progress(0.7, f"lemmatised {len(loci):,} loci")
    postings: dict[str, list[int]] = {}
    n_tokens = 0
    for i, (toks, lems) in enumerate(zip(loci, lemmas)):
        n_tokens += len(toks)
        for lem in {lem for tok, lem in zip(toks, lems) if is_content(lem, tok)}:
            postings.setdefault(lem, []).append(i)
    vocab = sorted(postings)
    codes = [encode_gaps(np.asarray(postings[lem], np.int64)) for lem in vocab]
    sizes = np.asarray([min(len({lem for tok, lem in zip(t, ls) if is_content(lem, tok)}), 255)
                        for t, ls in zip(loci, lemmas)], np.uint8)
    offsets = np.zeros(len(vocab) + 1, np.uint32)  # < 4 GiB of code
    offsets[1:] = np.cumsum([c.size for c in codes])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "postings.npy", np.concatenate(codes) if codes else np.zeros(0, np.uint8))
    np.save(out / "offsets.npy", offsets)
    np.save(out / "sizes.npy", sizes)
    (out / "lemmas.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    manifest = {"kind": "reference-loci", "format": FORMAT, "name": out.name, "language": "la",
                "source": Path(str(corpus)).name, "files": n_files, "loci": len(loci), "tokens": n_tokens,
                "lemmas": len(vocab), "postings": int(sum(len(v) for v in postings.values())),
                "long": LONG, "build_seconds": round(time.perf_counter() - t0, 1)}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if progress:
        progress(1.0, f"{len(vocab):,} lemmas, {manifest['postings']:,} postings")
    return manifest


# --------------------------------------------------------------------------------------------- reading
class LociIndex:
    """A built index, read-only: posting lists decoded on demand (the most recent ones kept)."""

    def __init__(self, folder):
        folder = Path(folder)
        try:
            self.manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            lemmas = (folder / "lemmas.txt").read_text(encoding="utf-8").split("\n")
            self._offsets = np.load(folder / "offsets.npy")
            self._code = np.load(folder / "postings.npy", mmap_mode="r")
            self._sizes = np.load(folder / "sizes.npy")  # a byte a locus: read once, indexed per explanation
        except (OSError, ValueError) as exc:
            raise ReferenceError(f"reference index {folder.name!r} cannot be read: {exc}") from None
        if self.manifest.get("kind") != "reference-loci" or self.manifest.get("format") != FORMAT:
            raise ReferenceError(f"reference index {folder.name!r}: not a format-{FORMAT} loci index")
        self._pos = {lem: i for i, lem in enumerate(x for x in lemmas if x)}
        if len(self._pos) + 1 != self._offsets.size:
            raise ReferenceError(f"reference index {folder.name!r}: lemmas and offsets differ in length")
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._held: OrderedDict[frozenset, np.ndarray] = OrderedDict()  # lemma sets asked for again (a query's)
        self._exact: dict[frozenset, np.ndarray] = {}
        self.name = self.manifest.get("name", folder.name)

    @property
    def n_loci(self) -> int:
        return int(self.manifest["loci"])

    def describe(self) -> str:
        return f"{self.name} ({self.n_loci:,} loci of {self.manifest.get('source', 'the reference corpus')})"

    def postings(self, lemma: str) -> np.ndarray:
        """Sorted ids of the loci holding ``lemma`` (empty when no locus does)."""
        hit = self._cache.get(lemma)
        if hit is not None:
            self._cache.move_to_end(lemma)
            return hit
        i = self._pos.get(lemma)
        ids = np.zeros(0, np.int64) if i is None else decode_gaps(self._code[self._offsets[i]:self._offsets[i + 1]])
        self._cache[lemma] = ids
        if len(self._cache) > 4096:
            self._cache.popitem(last=False)
        return ids

    def holding(self, lemmas: Iterable[str]) -> np.ndarray:
        """Ids of the loci that hold every one of ``lemmas`` (empty for no lemma)."""
        key = frozenset(lemmas)
        hit = self._held.get(key)
        if hit is not None:
            self._held.move_to_end(key)
            return hit
        lists = sorted((self.postings(lem) for lem in key), key=len)
        if not lists:
            return np.zeros(0, np.int64)
        common = lists[0]
        for other in lists[1:]:
            if common.size == 0:
                break
            common = common[_member(common, other)]
        self._held[key] = common
        if len(self._held) > 4096:
            self._held.popitem(last=False)
        return common

    def uniqueness(self, shared: Iterable[str], own_lines: Iterable[Iterable[str]] = ()) -> int | None:
        """How many loci hold every lemma of ``shared``, less the parallel's own lines where the reference has
        them (``own_lines``: each line's content lemmas; a locus with exactly those lemmas is that line, or a
        verbatim quotation of it); None when nothing is shared."""
        shared = set(shared)
        if not shared:
            return None
        common = self.holding(shared)
        own = [self.exactly(line) for line in map(frozenset, own_lines) if line and shared <= line]
        own = [x for x in own if x.size]  # a line without all the shared lemmas is not among ``common``
        if not own or common.size == 0:
            return int(common.size)
        return int(common.size - np.unique(np.concatenate(own)).size)

    def exactly(self, lemmas: frozenset) -> np.ndarray:
        """Ids of the loci whose content lemmas are exactly ``lemmas`` (memoised: a line is asked for by every
        candidate it appears in)."""
        hit = self._exact.get(lemmas)
        if hit is not None:
            return hit
        at = [self._pos.get(lem) for lem in lemmas]
        same = np.zeros(0, np.int64)
        if None not in at:  # rarest first (the coded list's length stands for the list's), decoded as needed
            order = sorted(zip(lemmas, at), key=lambda la: int(self._offsets[la[1] + 1] - self._offsets[la[1]]))
            first = self.postings(order[0][0])
            same = first[self._sizes[first] == min(len(lemmas), 255)]
            for lem, _ in order[1:]:
                if same.size == 0:
                    break
                same = same[_member(same, self.postings(lem))]
        if len(self._exact) > 16384:
            self._exact.clear()
        self._exact[lemmas] = same
        return same


def _member(a: np.ndarray, sorted_b: np.ndarray) -> np.ndarray:
    """Which entries of ``a`` are in the sorted array ``sorted_b`` (a binary search each: cheap when ``a`` is the
    short one, as the rarest posting list is)."""
    if sorted_b.size == 0:
        return np.zeros(a.shape, bool)
    pos = np.minimum(np.searchsorted(sorted_b, a), sorted_b.size - 1)
    return sorted_b[pos] == a


_LOADED: dict[str, LociIndex | None] = {}


def shipped_index(name: str = INDEX_NAME) -> LociIndex | None:
    """The shipped index ``name`` (``data/reference/<name>``), loaded once; None when it is not there."""
    if name not in _LOADED:
        folder = SHIPPED_DIR / name
        _LOADED[name] = LociIndex(folder) if (folder / "manifest.json").is_file() else None
    return _LOADED[name]
