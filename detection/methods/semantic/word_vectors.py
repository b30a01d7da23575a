"""Static word vectors trained offline on a large corpus, stored without pickle and loaded by name.

Training (:func:`train_word_vectors`): gensim Word2Vec or FastText (CBOW by default: on 2 cores a FastText
skip-gram over 13 M words takes ten times as long) on **units** of one language:

- Latin (``la``): the text engine's normalised tokens (u/i spelling, enclitics split off) or their lemmas
  (:func:`detection.latin.lemmatize.lemmatize_corpus`, once per word type), so that vectors are keyed exactly
  like the terms the retrievers index;
- Ancient Greek (``grc``): :class:`detection.greek.preprocess.GreekPreprocessor` tokens (NFC, lower case,
  punctuation dropped, diacritics kept) or lemmas by :class:`detection.greek.lemmatize.GreekLemmatizer`,
  normalised the same way (what :class:`detection.methods.greek.greek_similarity.StaticEmbedding` does).

Corpus reading (:func:`corpus_lines`): a folder (every ``.txt``/``.tess`` file below it, sorted), one file,
or a ``.tar``/``.tar.gz``/``.tar.xz`` archive of such files. Tesserae lines lose their ``<ref>``. Lines
shorter than ``min_tokens`` units and the Latin Library's navigation lines are dropped. The path is
operator input (a management command argument); web jobs pass a registered corpus name only.

Storage (:func:`save_vectors`): a folder ``<models dir>/<name>/`` with

- ``manifest.json``: ``{"kind": "word-vectors", "format": 1, "language", "unit", "method", "dim", training
  parameters, corpus statistics, training seconds, versions}``;
- ``vocab.txt``: one key a line, most frequent first, and ``counts.npy`` (int64 corpus counts);
- ``vectors.npy``: (V, dim) float16 or float32;
- FastText only: ``ngrams.npy`` (bucket, dim) and ``min_n``/``max_n``/``bucket`` in the manifest, so that
  words outside the vocabulary get a vector (mean of their hashed character n-gram rows, as gensim does).

Arrays are plain ``.npy`` read with ``mmap_mode="r"`` and ``allow_pickle=False``: loading never runs pickled
code and several processes share the pages. :func:`load_vectors` takes a **registered name** (resolved by
:mod:`detection.methods.infrastructure.model_store`), never a path. :func:`load_gensim_file` is for platform code that
holds a gensim file it made itself (a ``KeyedVectors`` or a full ``Word2Vec``/``FastText`` model file).
"""
from __future__ import annotations

import json
import os
import re
import tarfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from ..infrastructure import model_store

Progress = Callable[[float, str], None]

FORMAT = 1
KIND = "word-vectors"
LANGUAGES = ("la", "grc")
UNITS = ("surface", "lemma")
METHODS = ("word2vec", "fasttext")
_TEXT_SUFFIXES = (".txt", ".tess")
_TESS_REF = re.compile(r"^\s*<[^>]*>\s*")
_NAVIGATION = ("the latin library", "the classics page", "christian latin", "neo-latin", "medieval latin")


class VectorsError(ValueError):
    """A model folder that is not a word-vector model of the expected shape, or a bad training request."""


@dataclass
class TrainConfig:
    """What to train. ``sg``: 0 = CBOW, 1 = skip-gram. ``dtype`` of the stored vectors."""

    language: str = "la"
    method: str = "word2vec"
    unit: str = "lemma"
    dim: int = 200
    window: int = 5
    epochs: int = 5
    min_count: int = 3
    sg: int = 0
    seed: int = 42
    workers: int = 2
    min_n: int = 3
    max_n: int = 5
    bucket: int = 200_000
    min_tokens: int = 3
    dtype: str = "float16"

    def __post_init__(self):
        checks = ((self.language, LANGUAGES, "language"), (self.unit, UNITS, "unit"),
                  (self.method, METHODS, "method"), (self.dtype, ("float16", "float32"), "dtype"))
        for value, allowed, what in checks:
            if value not in allowed:
                raise VectorsError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")
        for what, lo, hi in (("dim", 4, 2048), ("window", 1, 50), ("epochs", 1, 200), ("min_count", 1, 10**6),
                             ("workers", 1, 64), ("min_n", 1, 10), ("max_n", 1, 10), ("bucket", 1000, 10**8),
                             ("min_tokens", 1, 100)):
            value = getattr(self, what)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise VectorsError(f"{what} must be an integer in [{lo}, {hi}], not {value!r}")
        if self.sg not in (0, 1):
            raise VectorsError("sg must be 0 (CBOW) or 1 (skip-gram)")
        if self.min_n > self.max_n:
            raise VectorsError("min_n must not exceed max_n")


# ------------------------------------------------------------------------------------------------ corpus
def corpora_dir() -> Path:
    """Where registered training corpora live: ``SIMILIA_CORPORA_DIR``, default beside the models directory."""
    env = os.environ.get("SIMILIA_CORPORA_DIR")
    return Path(env) if env else model_store.models_dir().parent / "corpora"


def resolve_corpus(name: str) -> Path:
    """The folder or archive registered as corpus ``name`` (a name, never a path; VectorsError otherwise)."""
    try:
        model_store.check_model_name(name)
    except ValueError:
        raise VectorsError(f"corpus must be a registered corpus name (letters, digits, '.', '_', '-'), "
                           f"not a path: {name!r:.80}") from None
    if "/" in name:
        raise VectorsError(f"corpus must be a registered corpus name, not {name!r:.80}")
    path = corpora_dir() / name
    if not path.exists():
        have = sorted(p.name for p in corpora_dir().iterdir()) if corpora_dir().is_dir() else []
        raise VectorsError(f"no corpus named {name!r} in {corpora_dir()} (registered: {', '.join(have) or 'none'})")
    return path


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def file_lines(name: str, text: str) -> Iterator[str]:
    tess = name.endswith(".tess")
    for line in text.splitlines():
        if tess:
            line = _TESS_REF.sub("", line)
        yield line


def corpus_files(path) -> list[Path]:
    """The text files a corpus folder holds (sorted), or the one file."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _TEXT_SUFFIXES)
    if path.is_file():
        return [path]
    raise VectorsError(f"corpus {str(path)!r} is neither a folder nor a file")


def _is_archive(path: Path) -> bool:
    return path.is_file() and any(path.name.endswith(s) for s in (".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2"))


def corpus_documents(path) -> Iterator[tuple[str, str]]:
    """(file name, decoded text) of every text file of a corpus (folder, file or tar archive), in a stable order."""
    path = Path(path)
    if _is_archive(path):
        with tarfile.open(path) as tar:
            members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(_TEXT_SUFFIXES)),
                             key=lambda m: m.name)
            for m in members:
                fh = tar.extractfile(m)
                if fh is not None:
                    yield m.name, _decode(fh.read())
        return
    for f in corpus_files(path):
        yield f.name, _decode(f.read_bytes())


def corpus_lines(path) -> Iterator[str]:
    """Raw text lines of every text file of a corpus (``.tess`` references removed), in a stable order."""
    for name, text in corpus_documents(path):
        yield from file_lines(name, text)


def _keep_line(line: str) -> bool:
    low = line.lower()
    return not any(n in low for n in _NAVIGATION)


def tokenizer_for(language: str) -> Callable[[Sequence[str]], list[list[str]]]:
    """Texts → normalised surface tokens, as the methods of ``language`` tokenise them."""
    if language == "la":
        from detection.latin.analysis import tokens_of

        return tokens_of
    if language == "grc":
        from detection.greek.preprocess import GreekPreprocessor

        pre = GreekPreprocessor()
        return lambda texts: [pre.tokenize(t) for t in texts]
    raise VectorsError(f"language must be one of {', '.join(LANGUAGES)}, not {language!r}")


def lemmatise(token_lists: list[list[str]], language: str, *, cache_dir=None, progress: Progress | None = None):
    """Lemmas of tokenised texts (once per word type)."""
    if language == "la":
        from detection.latin.lemmatize import lemmatize_corpus

        return lemmatize_corpus(token_lists, cache_dir=cache_dir, progress=progress)
    from detection.greek.lemmatize import GreekLemmatizer
    from detection.greek.preprocess import GreekPreprocessor

    lem, pre = GreekLemmatizer("rules"), GreekPreprocessor()
    vocab = sorted({t for ts in token_lists for t in ts})
    table = {}
    for i, form in enumerate(vocab):
        table[form] = pre.normalise(lem.lemma(form)) or form
        if progress and i % 20_000 == 0:
            progress(i / max(len(vocab), 1), f"lemmatising {i}/{len(vocab)} word types")
    return [[table[t] for t in ts] for ts in token_lists]


def units_of(texts: Sequence[str], language: str, unit: str, *, cache_dir=None,
             progress: Progress | None = None) -> list[list[str]]:
    """The training/lookup units of each text: normalised tokens or their lemmas."""
    if unit not in UNITS:
        raise VectorsError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
    toks = tokenizer_for(language)(list(texts))
    if unit == "lemma":
        toks = lemmatise(toks, language, cache_dir=cache_dir, progress=progress)
    return toks


def read_corpus(path, language: str, unit: str, *, min_tokens: int = 3, cache_dir=None,
                progress: Progress | None = None) -> tuple[list[list[str]], dict]:
    """Unit lists of a corpus's lines (short and navigation lines dropped) and statistics."""
    t0 = time.perf_counter()
    raw = [ln for ln in corpus_lines(path) if ln.strip() and _keep_line(ln)]
    if progress:
        progress(0.2, f"read {len(raw)} lines")
    toks = tokenizer_for(language)(raw)
    toks = [ts for ts in toks if len(ts) >= min_tokens]
    if unit == "lemma":
        toks = lemmatise(toks, language, cache_dir=cache_dir,
                         progress=(lambda f, m: progress(0.2 + 0.8 * f, m)) if progress else None)
    if not toks:
        raise VectorsError(f"corpus {str(path)!r} has no line with {min_tokens} or more words")
    stats = {"lines": len(toks), "tokens": int(sum(len(t) for t in toks)),
             "read_seconds": round(time.perf_counter() - t0, 1)}
    return toks, stats


# ---------------------------------------------------------------------------------------------- training
def train_word_vectors(sentences: list[list[str]], config: TrainConfig, *, progress: Progress | None = None):
    """A trained gensim model (Word2Vec or FastText); ``progress`` after every epoch."""
    from gensim.models import FastText, Word2Vec
    from gensim.models.callbacks import CallbackAny2Vec

    class _Epochs(CallbackAny2Vec):
        def __init__(self):
            self.done = 0

        def on_epoch_end(self, model):
            self.done += 1
            if progress:
                progress(self.done / config.epochs, f"epoch {self.done}/{config.epochs}")

    common = dict(vector_size=config.dim, window=config.window, min_count=config.min_count, sg=config.sg,
                  seed=config.seed, workers=config.workers, epochs=config.epochs)
    cls = Word2Vec if config.method == "word2vec" else FastText
    if config.method == "fasttext":
        common.update(min_n=config.min_n, max_n=config.max_n, bucket=config.bucket)
    model = cls(**common)
    model.build_vocab(sentences)
    if not len(model.wv):
        raise VectorsError(f"no unit occurs {config.min_count} times or more: lower min_count")
    model.train(sentences, total_examples=model.corpus_count, epochs=config.epochs, callbacks=[_Epochs()])
    return model


def _versions() -> dict:
    import gensim

    return {"gensim": gensim.__version__, "numpy": np.__version__}


def save_vectors(name: str, model, config: TrainConfig, *, corpus: dict | None = None,
                 train_seconds: float | None = None, models_dir=None) -> Path:
    """Write ``model``'s vectors under ``<models dir>/<name>/`` (see the module docstring); the folder path."""
    model_store.check_model_name(name)
    if "/" in name:
        raise VectorsError("a trained model's name has no '/' (that form is for hub ids)")
    root = Path(models_dir) if models_dir is not None else model_store.models_dir()
    out = root / name
    tmp = root / f".{name}.tmp-{os.getpid()}"
    tmp.mkdir(parents=True, exist_ok=False)
    wv = model.wv
    dtype = np.dtype(config.dtype)
    np.save(tmp / "vectors.npy", np.asarray(wv.vectors, dtype=dtype), allow_pickle=False)
    counts = np.asarray([wv.get_vecattr(k, "count") for k in wv.index_to_key], dtype=np.int64)
    np.save(tmp / "counts.npy", counts, allow_pickle=False)
    (tmp / "vocab.txt").write_text("\n".join(wv.index_to_key) + "\n", encoding="utf-8")
    manifest = {"kind": KIND, "format": FORMAT, "name": name, **asdict(config), "vocab_size": len(wv),
                "corpus": corpus or {}, "train_seconds": None if train_seconds is None else round(train_seconds, 1),
                "versions": _versions()}
    if config.method == "fasttext":
        np.save(tmp / "ngrams.npy", np.asarray(wv.vectors_ngrams, dtype=dtype), allow_pickle=False)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
    manifest["bytes"] = sum(p.stat().st_size for p in tmp.iterdir())
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
    if out.exists():
        raise VectorsError(f"a model named {name!r} already exists in {root}")
    os.replace(tmp, out)
    return out


# ----------------------------------------------------------------------------------------------- loading
@dataclass
class WordVectors:
    """Vectors keyed by unit. ``vectors`` may be a read-only memory map (float16 or float32)."""

    keys: list[str]
    vectors: np.ndarray
    counts: np.ndarray | None = None
    manifest: dict = field(default_factory=dict)
    ngrams: np.ndarray | None = None
    index: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.index:
            self.index = {k: i for i, k in enumerate(self.keys)}
        if len(self.keys) != self.vectors.shape[0]:
            raise VectorsError(f"{len(self.keys)} keys but {self.vectors.shape[0]} vectors")
        self._unit = None

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def language(self) -> str:
        return self.manifest.get("language", "la")

    @property
    def unit(self) -> str:
        return self.manifest.get("unit", "lemma")

    def __contains__(self, key) -> bool:
        return key in self.index or (self.ngrams is not None and bool(self._ngram_rows(key)))

    def _ngram_rows(self, word: str) -> list[int]:
        from gensim.models.fasttext import ft_ngram_hashes

        m = self.manifest
        return list(ft_ngram_hashes(word, m["min_n"], m["max_n"], m["bucket"]))

    def vector(self, key: str) -> np.ndarray | None:
        """float32 vector of ``key``: its row, or (FastText) the mean of its n-gram rows, else None."""
        i = self.index.get(key)
        if i is not None:
            return np.asarray(self.vectors[i], np.float32)
        if self.ngrams is not None:
            rows = self._ngram_rows(key)
            if rows:
                return np.asarray(self.ngrams[rows], np.float32).mean(axis=0)
        return None

    def unit_vectors(self) -> np.ndarray:
        """All vectors as float32 rows of length 1 (cached; zero rows stay zero)."""
        if self._unit is None:
            v = np.asarray(self.vectors, np.float32)
            n = np.linalg.norm(v, axis=1, keepdims=True)
            self._unit = v / np.maximum(n, 1e-12)
        return self._unit

    def frequencies(self) -> np.ndarray:
        """Relative corpus frequency of every key (uniform when counts are unknown)."""
        if self.counts is None or not len(self.counts):
            return np.full(len(self.keys), 1.0 / max(len(self.keys), 1))
        c = np.asarray(self.counts, np.float64)
        return c / c.sum()

    @classmethod
    def from_gensim(cls, kv, manifest: dict | None = None) -> "WordVectors":
        """Wrap gensim ``KeyedVectors`` (tests and in-memory models)."""
        keys = list(kv.index_to_key)
        try:
            counts = np.asarray([kv.get_vecattr(k, "count") for k in keys], np.int64)
        except KeyError:
            counts = None
        man = dict(manifest or {})
        ngrams = None
        if hasattr(kv, "vectors_ngrams") and getattr(kv, "bucket", 0):
            ngrams = kv.vectors_ngrams
            man.update(min_n=kv.min_n, max_n=kv.max_n, bucket=kv.bucket)
        return cls(keys=keys, vectors=np.asarray(kv.vectors), counts=counts, manifest=man, ngrams=ngrams)


def read_manifest(folder: Path) -> dict:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VectorsError(f"model {folder.name!r} has no manifest.json: it is not a word-vector model") from None
    except ValueError as exc:
        raise VectorsError(f"model {folder.name!r}: manifest.json is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND:
        kind = manifest.get("kind") if isinstance(manifest, dict) else None
        raise VectorsError(f"model {folder.name!r} is a {kind!r} model, not {KIND!r}")
    if manifest.get("format") != FORMAT:
        raise VectorsError(f"model {folder.name!r}: unknown format {manifest.get('format')!r}")
    return manifest


def load_folder(folder: Path) -> WordVectors:
    """Load a model folder written by :func:`save_vectors` (memory-mapped, no pickle)."""
    manifest = read_manifest(folder)

    def arr(fname):
        return np.load(folder / fname, mmap_mode="r", allow_pickle=False)

    keys = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if keys and keys[-1] == "":
        keys.pop()
    vectors = arr("vectors.npy")
    if vectors.ndim != 2 or vectors.shape[1] != manifest.get("dim"):
        raise VectorsError(f"model {folder.name!r}: vectors of shape {vectors.shape}, manifest says dim "
                           f"{manifest.get('dim')}")
    counts = arr("counts.npy") if (folder / "counts.npy").exists() else None
    ngrams = arr("ngrams.npy") if manifest.get("method") == "fasttext" else None
    return WordVectors(keys=keys, vectors=vectors, counts=counts, manifest=manifest, ngrams=ngrams)


_CACHE: dict = {}


def load_vectors(name: str, *, language: str | None = None) -> WordVectors:
    """The word-vector model registered as ``name`` in the models directory, else shipped in ``data/vectors/``
    (cached per folder and mtime).

    Raises ModelUnavailable when there is no such model, VectorsError when it is not a word-vector model
    or is of another language than ``language``.
    """
    model_store.check_model_name(name)
    folder = model_store.local_path(name)
    if folder is None or not folder.is_dir():  # not trained here: a copy shipped in data/vectors/, if any
        folder = model_store.shipped_path(name)
    if folder is None or not folder.is_dir():
        raise model_store.ModelUnavailable(
            f"word-vector model {name!r} is not in the models directory {model_store.models_dir()}; train it with "
            f"`manage.py train_embeddings --name {name} ...` (registered names: "
            f"{', '.join(list_vector_models()) or 'none'})")
    key = (str(folder.resolve()), (folder / "manifest.json").stat().st_mtime_ns if (folder / "manifest.json").exists()
           else 0)
    wv = _CACHE.get(key)
    if wv is None:
        wv = _CACHE[key] = load_folder(folder)
    if language is not None and wv.language != language:
        raise VectorsError(f"model {name!r} holds {wv.language!r} vectors, not {language!r}")
    return wv


def list_vector_models() -> list[str]:
    """Names of the word-vector models in the models directory."""
    out = []
    for name in model_store.list_local():
        folder = model_store.models_dir() / name
        try:
            read_manifest(folder)
        except (VectorsError, OSError):
            continue
        out.append(name)
    return out


def load_gensim_file(path) -> WordVectors:
    """Vectors of a gensim file made by platform code: ``KeyedVectors`` or a full ``Word2Vec``/``FastText``.

    gensim's ``.load`` unpickles, so this is never given a user's file (users name registered models).
    """
    from gensim.models import KeyedVectors
    from gensim.utils import SaveLoad

    obj = SaveLoad.load(str(path))
    kv = obj if isinstance(obj, KeyedVectors) else getattr(obj, "wv", None)
    if not isinstance(kv, KeyedVectors):
        raise VectorsError(f"{Path(path).name}: a {type(obj).__name__}, not word vectors")
    return WordVectors.from_gensim(kv)


def train_and_save(corpus, name: str, config: TrainConfig, *, progress: Progress | None = None, cache_dir=None,
                   models_dir=None, corpus_label: str | None = None, log: Callable[[str], None] | None = None) -> dict:
    """Read ``corpus``, train, save as ``name``; the manifest written. Progress: 0–0.2 reading, then epochs."""
    root = Path(models_dir) if models_dir is not None else model_store.models_dir()
    if (root / name).exists():
        raise VectorsError(f"a model named {name!r} already exists in {root}")

    def sub(lo, hi):
        return (lambda f, m: progress(lo + (hi - lo) * f, m)) if progress else None

    sentences, stats = read_corpus(corpus, config.language, config.unit, min_tokens=config.min_tokens,
                                   cache_dir=cache_dir, progress=sub(0.0, 0.2))
    stats["source"] = corpus_label or Path(corpus).name
    if log:
        log(f"corpus: {stats['lines']} lines, {stats['tokens']} {config.unit} units ({stats['read_seconds']} s)")
    t0 = time.perf_counter()
    model = train_word_vectors(sentences, config, progress=sub(0.2, 0.98))
    seconds = time.perf_counter() - t0
    folder = save_vectors(name, model, config, corpus=stats, train_seconds=seconds, models_dir=root)
    manifest = read_manifest(folder)
    if log:
        log(f"trained {config.method} {config.unit} dim {config.dim} in {seconds:.0f} s: {manifest['vocab_size']} "
            f"units, {manifest['bytes'] / 2**20:.1f} MiB in {folder}")
    if progress:
        progress(1.0, f"saved {name}")
    return manifest


def train_from_texts(texts: Sequence[str], name: str, config: TrainConfig, *, models_dir=None,
                     corpus_label: str = "texts") -> dict:
    """Train on a list of texts (small corpora: the demo's, tests') and save as ``name``; the manifest."""
    docs = [d for d in units_of(texts, config.language, config.unit) if len(d) >= config.min_tokens]
    if not docs:
        raise VectorsError(f"no text with {config.min_tokens} or more words")
    t0 = time.perf_counter()
    model = train_word_vectors(docs, config)
    stats = {"lines": len(docs), "tokens": int(sum(map(len, docs))), "source": corpus_label}
    folder = save_vectors(name, model, config, corpus=stats, train_seconds=time.perf_counter() - t0,
                          models_dir=models_dir)
    return read_manifest(folder)

