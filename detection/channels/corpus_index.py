"""A corpus index on disk: what every channel of the ``channels`` method needs, precomputed for every segment of
a corpus, in plain ``.npy`` files read memory-mapped (never pickled).

Layout of ``<root>/<corpus>/``:

- ``manifest.json``: format, the digest (the method configuration's, the lemmatiser's version, this format), the
  configuration, the works (key, author, title, citation prefix, genre, first segment, count), the parts, the
  semantic encoder's fitted components;
- ``synonyms.*.npy``: the vectors' synonym relation (a lemma's hash -> a related vector key), from the vectors only;
- ``sound_idf.*.npy``: the sound channel's trigram idf over the whole corpus (hash -> idf);
- one folder per **part** (a build's or an extension's works, at most ``PART_SIZE`` segments): the texts and
  references (UTF-8 blobs with offsets), each segment's work, and per sparse matrix (``lemma``: the lemma,
  rare-lemma and synonym channels; ``form``: form and edit; ``quote``, ``order``, ``position``, ``sound``) the
  feature-major postings: sorted 64-bit feature hashes, row pointers, segments, weights (``sound`` also keeps the
  raw trigram counts and every trigram's document frequency); the semantic channel's unit vectors
  (float32); the part's forms with their deletion keys for the edit channel's variants.

Adding works writes a new part and recomputes the sound idf from the stored document frequencies (the other
weights are reference-corpus rarities, fixed by the vectors), re-weighting the parts' sound postings from their
raw counts: no text is analysed again. Features are named by a stable 64-bit hash of their string (BLAKE2b), so a
query looks its features up with a binary search, without a vocabulary in memory.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from detection.channels import channel_features as C
from detection.channels.bulk_features import source_index
from detection.latin.lemmatize import LEMMATIZER_VERSION

FORMAT = 1
PART_SIZE = 60_000
MATRICES = ("lemma", "form", "quote", "order", "position", "sound")
# the matrix each sparse channel reads (rare: the lemma postings of the query's rare lemmas)
CHANNEL_MATRIX = {"lemma": "lemma", "rare": "lemma", "synonym": "lemma", "form": "form", "edit": "form",
                  "quote": "quote", "order": "order", "position": "position", "sound": "sound"}
# trigrams in more than this share of the segments carry no sound of their own: the channel's rule is a fifth of the
# fitted texts; over a corpus of 100,000s of segments a common trigram's postings cost more than every other
# channel together (docs/corpus_search.md), so the corpus index keeps the rarer ones only

# The corpus index's default sound statistic (the sound channel's cap, ``C.METHOD_SOUND_CAP`` = 1/5 for the method):
# over a corpus of 100,000s of segments a common trigram's postings cost more than every other channel together
# (docs/corpus_search.md), so the default keeps trigrams in at most 1 % of the segments; an index built with the
# method's cap (``ChannelSettings.sound_cap``) scores and explains sound as pairwise detection does.
CORPUS_SOUND_CAP = 0.01
Progress = Callable[[float, str], None]


class CorpusIndexError(ValueError):
    """A corpus index that cannot be built, extended or read (the message says why)."""


class StaleIndex(CorpusIndexError):
    """An index built with another analyser or method configuration: it must be rebuilt."""


def feature_hashes(names: Sequence[str]) -> np.ndarray:
    """Stable 64-bit hashes of feature strings (the same in every process)."""
    out = np.empty(len(names), np.uint64)
    for i, s in enumerate(names):
        out[i] = int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")
    return out


def analyser_digest(config_digest: str) -> str:
    """What an index's features depend on: the method configuration, the lemmatiser, this format."""
    try:
        simplemma = version("simplemma")
    except PackageNotFoundError:
        simplemma = "none"
    head = {"config": config_digest, "format": FORMAT, "lemmatizer": LEMMATIZER_VERSION, "simplemma": simplemma}
    return hashlib.sha256(json.dumps(head, sort_keys=True).encode()).hexdigest()[:32]


@dataclass
class ChannelSettings:
    """The configured ``channels`` method as the index needs it (see :func:`channel_settings`)."""

    config: dict  # MethodConfig.to_json()
    digest: str  # analyser_digest of the configuration
    weights: dict[str, float]
    rare_min: float
    budget: int
    wv: object  # the word vectors (rarity, synonyms, semantics)
    sound_cap: float = CORPUS_SOUND_CAP  # the sound channel's document-frequency cap over this index

    @property
    def rarity(self) -> C.Rarity:
        r = getattr(self, "_rarity", None)
        if r is None:
            counts = np.asarray(self.wv.counts, np.float64)
            r = self._rarity = C.Rarity(dict(zip(self.wv.keys, counts.tolist())), float(counts.sum()),
                                        "word vectors")
        return r


def channel_settings(params: dict | None = None, *, sound_cap: float = CORPUS_SOUND_CAP) -> ChannelSettings:
    """The ``channels`` method configured with ``params`` (the registry's one validation) and built."""
    from detection.methods import registry

    config = registry.configure("channels", params or {}, kind="retriever")
    retriever = registry.build_config(config)
    if "encoder" in retriever.weights:
        raise CorpusIndexError("a corpus index holds no sentence-encoder channel: leave 'encoder' unset")
    wv = getattr(retriever, "_wv", None)
    if wv is None or getattr(wv, "counts", None) is None:
        raise CorpusIndexError("a corpus index needs word vectors with counts (rarity, synonyms, semantics)")
    return ChannelSettings(config.to_json(), analyser_digest(config.digest), dict(retriever.weights),
                           float(retriever.rare_min), int(retriever.budget), wv, float(sound_cap))


# ------------------------------------------------------------------------------------------ writing
def _save(folder: Path, name: str, arr: np.ndarray) -> None:
    tmp = folder / f".{name}.tmp.npy"
    np.save(tmp, np.ascontiguousarray(arr), allow_pickle=False)
    os.replace(tmp, folder / f"{name}.npy")


def _blob(folder: Path, name: str, strings: Sequence[str]) -> None:
    data = [s.encode("utf-8") for s in strings]
    off = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(b) for b in data], out=off[1:])
    _save(folder, f"{name}.off", off)
    _save(folder, f"{name}.bin", np.frombuffer(b"".join(data), np.uint8))


def _sorted_rows(keys: np.ndarray, indptr: np.ndarray, seg: np.ndarray, *vals: np.ndarray):
    """A feature-major CSR with its rows reordered by key (for binary search)."""
    order = np.argsort(keys, kind="stable")
    lens = np.diff(indptr)[order]
    new_ptr = np.zeros(keys.size + 1, np.int64)
    np.cumsum(lens, out=new_ptr[1:])
    starts = indptr[:-1][order]
    take = np.repeat(starts - new_ptr[:-1], lens) + np.arange(int(new_ptr[-1]), dtype=np.int64)
    return (keys[order], new_ptr, seg[take], *(v[take] for v in vals))


def _write_matrix(folder: Path, name: str, mat, names: list[str]) -> None:
    n_rows = len(names)
    indptr = np.asarray(mat.indptr[:n_rows + 1], np.int64)
    keys, ptr, seg, w = _sorted_rows(feature_hashes(names), indptr, np.asarray(mat.indices, np.int32),
                                     np.asarray(mat.data, np.float32))
    for suffix, arr in (("keys", keys), ("ptr", ptr), ("seg", seg), ("w", w)):
        _save(folder, f"{name}.{suffix}", arr)


def _content(doc: C.Doc) -> list[tuple[str, str]]:
    return [(t, lem) for t, lem in zip(doc.tokens, doc.lemmas) if C.is_content(lem, t)]


def _sound_counts(folder: Path, docs: Sequence[C.Doc]) -> None:
    """Every segment's content-word trigram counts (feature-major, raw) and each trigram's document frequency."""
    tri: dict[str, int] = {}
    segs, ids, cnts = [], [], []
    for j, d in enumerate(docs):
        counts: dict[int, int] = {}
        for t, _lem in _content(d):
            for g in C.char_trigrams(t):
                i = tri.setdefault(g, len(tri))
                counts[i] = counts.get(i, 0) + 1
        segs.extend([j] * len(counts))
        ids.extend(counts.keys())
        cnts.extend(counts.values())
    seg, tid, cnt = np.asarray(segs, np.int32), np.asarray(ids, np.int64), np.asarray(cnts, np.float32)
    order = np.lexsort((seg, tid))
    seg, tid, cnt = seg[order], tid[order], cnt[order]
    ptr = np.zeros(len(tri) + 1, np.int64)
    np.cumsum(np.bincount(tid, minlength=len(tri)), out=ptr[1:])
    keys, ptr, seg, cnt = _sorted_rows(feature_hashes(list(tri)), ptr, seg, cnt)
    for suffix, arr in (("keys", keys), ("ptr", ptr), ("seg", seg), ("cnt", cnt), ("w", np.zeros_like(cnt))):
        _save(folder, f"sound.{suffix}", arr)


def _variants(folder: Path, docs: Sequence[C.Doc], min_len: int = 5) -> None:
    """The part's forms (at least ``min_len`` letters) and their deletion keys (the edit channel's neighbours)."""
    forms = sorted({t for d in docs for t in d.tokens if len(t) >= min_len})
    keys, owner = [], []
    for i, w in enumerate(forms):
        a = C.assimilated(w)
        ks = {"=" + a, a, *(a[:p] + a[p + 1:] for p in range(len(a)))}
        keys.extend(ks)
        owner.extend([i] * len(ks))
    h = feature_hashes(keys)
    order = np.argsort(h, kind="stable")
    _save(folder, "variants.keys", h[order])
    _save(folder, "variants.form", np.asarray(owner, np.int32)[order])
    _blob(folder, "forms", forms)


def _write_part(folder: Path, works, settings: ChannelSettings, encoder, progress: Progress | None) -> int:
    folder.mkdir(parents=True)
    texts = [t for w in works for t in w.texts]
    _blob(folder, "text", texts)
    _blob(folder, "ref", [r for w in works for r in w.refs])
    docs = C.analyse(texts)
    if progress:
        progress(0.5, f"{len(texts):,} segments analysed")
    idx = source_index(docs, settings.rarity, rare_min=settings.rare_min,
                       channels=["lemma", "form", "quote", "order", "position"])
    _blob(folder, "lemmas", list(idx.space.vocab["lemma"]))
    for name in ("lemma", "form", "quote", "order", "position"):
        _write_matrix(folder, name, idx.matrices[name], list(idx.space.vocab[name]))
    _sound_counts(folder, docs)
    _variants(folder, docs)
    content = [[lem for _t, lem in _content(d)] for d in docs]
    vectors = encoder.encode(content).astype(np.float32)
    _save(folder, "semantic", vectors)
    _save(folder, "semantic8", quantised(vectors))
    return len(texts)


def quantised(unit_vectors: np.ndarray) -> np.ndarray:
    """Unit vectors as int8 (x 127): the semantic channel's scan reads a quarter of the bytes."""
    return np.clip(np.round(unit_vectors * 127), -127, 127).astype(np.int8)


def _synonyms(root: Path, wv, parts: list[dict]) -> None:
    """The vectors' synonym pairs among the corpus's lemmas (both directions of a neighbour), as
    :func:`.channels.vector_synonyms` relates the lemmas of the fitted sources; recomputed when works are added."""
    lemmas = sorted({x for p in parts for x in Blob(root / p["dir"], "lemmas")})
    rel = C.vector_synonyms(wv, lemmas)
    a, b = [], []
    pos = wv.index
    for w, others in rel.pairs.items():
        for o in others:
            a.append(w)
            b.append(pos[o])
    h = feature_hashes(a)
    order = np.argsort(h, kind="stable")
    _save(root, "synonyms.keys", h[order])
    _save(root, "synonyms.other", np.asarray(b, np.int32)[order])


def _reweigh_sound(root: Path, parts: list[dict], n_total: int, cap: float) -> None:
    """The trigram idf over every part (``log(N / df)``, 0 past the share ``cap``), then every part's sound
    postings weighed and normalised per segment from their raw counts (:func:`.channels.weigh_sound`)."""
    keys = np.concatenate([np.load(root / p["dir"] / "sound.keys.npy") for p in parts])
    df = np.concatenate([np.diff(np.load(root / p["dir"] / "sound.ptr.npy")) for p in parts])
    uk, inv = np.unique(keys, return_inverse=True)
    total_df = np.bincount(inv.ravel(), weights=df, minlength=uk.size)
    n = max(n_total, 1)
    idf = np.where((total_df > 0) & (total_df <= n * cap), np.log(n / np.maximum(total_df, 1)), 0.0)
    _save(root, "sound_idf.keys", uk)
    _save(root, "sound_idf.val", idf.astype(np.float64))
    for p in parts:
        folder = root / p["dir"]
        k = np.load(folder / "sound.keys.npy")
        ptr = np.load(folder / "sound.ptr.npy")
        seg = np.load(folder / "sound.seg.npy")
        cnt = np.load(folder / "sound.cnt.npy").astype(np.float64)
        row_idf = idf[np.searchsorted(uk, k)]
        v = cnt * np.repeat(row_idf, np.diff(ptr))
        norm = np.sqrt(np.bincount(seg, weights=v * v, minlength=p["n"]))
        norm[norm == 0] = 1.0
        _save(folder, "sound.w", (v / norm[seg]).astype(np.float32))


def build_index(root, name: str, works: Sequence, settings: ChannelSettings, *, extend: bool = False,
                progress: Progress | None = None, part_size: int = PART_SIZE) -> dict:
    """Write (or, ``extend``, add works to) the index ``<root>/<name>``; returns its manifest. A fresh build is
    written to a temporary folder and moved in place when complete."""
    from detection.methods.semantic.static_semantic import SegmentEncoder

    t0 = time.time()
    root = Path(root)
    final = root / name
    if extend:
        manifest = read_manifest(final)
        if manifest["digest"] != settings.digest:
            raise StaleIndex(f"the index of {name!r} was built with another analyser or configuration: rebuild it")
        folder = final
        encoder = SegmentEncoder.from_state(settings.wv, manifest["encoder"])
    else:
        folder = root / f".{name}.building-{os.getpid()}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        manifest = {"format": FORMAT, "digest": settings.digest, "config": settings.config, "works": [],
                    "parts": [], "n_segments": 0, "encoder": None, "sound_cap": settings.sound_cap}
        encoder = None
    known = {w["key"] for w in manifest["works"]}
    total = max(sum(len(w.texts) for w in works), 1)
    batch, size, added = [], 0, 0

    def flush():
        nonlocal batch, size, encoder, added
        if not batch:
            return
        if encoder is None:  # SIF's common component from the first part's segments
            docs = C.analyse([t for w in batch for t in w.texts][:part_size])
            encoder = SegmentEncoder(settings.wv, "sif").fit([[lem for _t, lem in _content(d)] for d in docs])
            manifest["encoder"] = encoder.state()
        len_batch = sum(len(w.texts) for w in batch)
        pdir = f"p{len(manifest['parts']):03d}-{int(time.time() * 1000) % 10**9}"
        start = manifest["n_segments"]

        def part_progress(f, msg):
            if progress:
                progress(0.9 * (added + f * len_batch) / total, f"part {len(manifest['parts']) + 1}: {msg}")

        part_progress(0.0, f"analysing {len_batch:,} segments")
        n = _write_part(folder / pdir, batch, settings, encoder, part_progress)
        for w in batch:
            manifest["works"].append({"key": w.key, "author": w.author, "title": w.title, "cite": w.cite,
                                      "genre": w.genre, "start": start, "n": len(w.texts)})
            start += len(w.texts)
        manifest["parts"].append({"dir": pdir, "start": manifest["n_segments"], "n": n})
        manifest["n_segments"] += n
        added += n
        batch, size = [], 0

    original = {p["dir"] for p in manifest["parts"]}
    try:
        for w in works:
            if w.key in known:
                raise CorpusIndexError(f"the work {w.key!r} is in the corpus {name!r} already")
            known.add(w.key)
            if size and size + len(w.texts) > part_size:
                flush()
            batch.append(w)
            size += len(w.texts)
        flush()
        if not manifest["parts"]:
            raise CorpusIndexError("no work with readable segments")
        if progress:
            progress(0.95, "synonyms and sound weights")
        _synonyms(folder, settings.wv, manifest["parts"])
        _reweigh_sound(folder, manifest["parts"], manifest["n_segments"], manifest.get("sound_cap", CORPUS_SOUND_CAP))
        manifest["seconds_last_build"] = round(time.time() - t0, 1)
        manifest["added_last_build"] = added
        tmp = folder / ".manifest.tmp"
        tmp.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, folder / "manifest.json")
    except BaseException:  # nothing half-built is left: a fresh build's folder, an extension's new parts
        if extend:
            for p in folder.glob("p*"):
                if p.is_dir() and p.name not in original:
                    shutil.rmtree(p, ignore_errors=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if not extend:
        old = root / f".{name}.old-{os.getpid()}"
        if final.exists():
            os.replace(final, old)
        os.replace(folder, final)
        shutil.rmtree(old, ignore_errors=True)
    return manifest


def read_manifest(folder) -> dict:
    path = Path(folder) / "manifest.json"
    if not path.is_file():
        raise CorpusIndexError(f"no index at {Path(folder).name!r}: build it first")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT:
        raise StaleIndex("the index was written in another format: rebuild it")
    return manifest


def index_bytes(folder) -> int:
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


# ------------------------------------------------------------------------------------------ reading
class Blob:
    """Strings stored as one UTF-8 blob with offsets, read memory-mapped."""

    def __init__(self, folder: Path, name: str):
        self.data = np.load(folder / f"{name}.bin.npy", mmap_mode="r").view(np.ndarray)
        self.off = np.load(folder / f"{name}.off.npy", mmap_mode="r").view(np.ndarray)

    def __len__(self) -> int:
        return self.off.size - 1

    def __getitem__(self, i: int) -> str:
        return bytes(self.data[self.off[i]:self.off[i + 1]]).decode("utf-8")

    def __iter__(self):
        data, off = bytes(self.data), self.off.tolist()
        return (data[a:b].decode("utf-8") for a, b in zip(off[:-1], off[1:]))


class Part:
    """One part of an index, memory-mapped."""

    def __init__(self, folder: Path, start: int, n: int):
        self.folder, self.start, self.n = folder, start, n
        self.text, self.ref, self.forms = Blob(folder, "text"), Blob(folder, "ref"), Blob(folder, "forms")

        def load(name):  # a plain array over the mapped file (indexing a np.memmap costs more)
            return np.load(folder / f"{name}.npy", mmap_mode="r").view(np.ndarray)

        self.mats = {m: tuple(load(f"{m}.{s}") for s in ("keys", "ptr", "seg", "w")) for m in MATRICES}
        self.semantic, self.semantic8 = load("semantic"), load("semantic8")
        self.var_keys, self.var_form = load("variants.keys"), load("variants.form")


class CorpusIndex:
    """A built index, read memory-mapped: the works, the parts, the segments' texts and references."""

    def __init__(self, folder, *, expected_digest: str | None = None):
        self.folder = Path(folder)
        self.manifest = read_manifest(self.folder)
        if expected_digest is not None and self.manifest["digest"] != expected_digest:
            raise StaleIndex("this corpus index was built with another analyser or method configuration: rebuild it")
        self.works = self.manifest["works"]
        self.parts = [Part(self.folder / p["dir"], p["start"], p["n"]) for p in self.manifest["parts"]]
        self.n = int(self.manifest["n_segments"])
        self.part_starts = np.asarray([p.start for p in self.parts], np.int64)
        self.work_starts = np.asarray([w["start"] for w in self.works], np.int64)
        self.work_by_key = {w["key"]: i for i, w in enumerate(self.works)}
        self.syn_keys, self.syn_other = np.load(self.folder / "synonyms.keys.npy"), np.load(self.folder / "synonyms.other.npy")
        self.idf_keys, self.idf_val = np.load(self.folder / "sound_idf.keys.npy"), np.load(self.folder / "sound_idf.val.npy")

    def _part(self, i: int) -> tuple[Part, int]:
        p = self.parts[int(np.searchsorted(self.part_starts, i, side="right")) - 1]
        return p, i - p.start

    def text(self, i: int) -> str:
        p, j = self._part(i)
        return p.text[j]

    def ref(self, i: int) -> str:
        p, j = self._part(i)
        return p.ref[j]

    def work_of(self, i: int) -> int:
        return int(np.searchsorted(self.work_starts, i, side="right")) - 1

    def citation(self, i: int) -> str:
        w = self.works[self.work_of(i)]
        return f"{w['cite']} {self.ref(i)}".strip()

    def sound_idf(self, trigrams: Iterable[str]) -> dict[str, float]:
        grams = sorted(set(trigrams))
        if not grams or self.idf_keys.size == 0:
            return {}
        h = feature_hashes(grams)
        pos = np.minimum(np.searchsorted(self.idf_keys, h), self.idf_keys.size - 1)
        return {g: float(self.idf_val[p]) for g, p, x in zip(grams, pos, h) if self.idf_keys[p] == x}

    def synonyms(self, lemmas: Iterable[str], keys: Sequence[str]) -> C.Relation:
        """The vectors' synonym relation for ``lemmas`` (``keys``: the vectors' keys)."""
        out = {}
        for lem in set(lemmas):
            h = feature_hashes([lem])[0]
            a, b = np.searchsorted(self.syn_keys, h), np.searchsorted(self.syn_keys, h, side="right")
            if b > a:
                out[lem] = frozenset(keys[int(j)] for j in self.syn_other[a:b])
        return C.Relation(out)

    def variants(self, forms: Iterable[str], min_len: int = 5) -> C.Relation:
        """Each query form -> the corpus forms one edit from it (after assimilation), as
        :class:`detection.channels.bulk_features.VariantIndex` finds them."""
        out: dict[str, set[str]] = {}
        words = sorted({f for f in forms if len(f) >= min_len})
        assim = {w: C.assimilated(w) for w in words}
        owners, keys = [], []
        for w in words:
            a = assim[w]
            ks = {"=" + a, a, *(a[:p] + a[p + 1:] for p in range(len(a)))}
            keys.extend(ks)
            owners.extend([w] * len(ks))
        if not keys:
            return C.Relation({})
        h = feature_hashes(keys)
        for part in self.parts:
            lo = np.searchsorted(part.var_keys, h)
            hi = np.searchsorted(part.var_keys, h, side="right")
            found = np.flatnonzero(hi > lo)
            pairs = set()
            for x in found.tolist():
                for fi in part.var_form[lo[x]:hi[x]].tolist():
                    pairs.add((owners[x], fi))
            for w, fi in pairs:
                g = part.forms[fi]
                if g != w and g not in out.get(w, ()) and C._one_edit(assim[w], C.assimilated(g)):
                    out.setdefault(w, set()).add(g)
        return C.Relation({k: frozenset(v) for k, v in out.items()})
