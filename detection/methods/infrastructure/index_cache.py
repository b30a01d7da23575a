"""A content-addressed cache of fitted pool indexes, shared by every job and worker that sees the same folder.

Fitting a lexical retriever on a large pool is mostly analysing the texts (tokens, lemmas; see
``perf/fit_profile.py``), and it gives the same index whenever the method, its parameters and the texts are the
same. So a fitted index is stored once under its key and every later job, shard or worker process over the
same corpus loads it (memory-mapped ``.npy`` arrays, ``detection.methods.infrastructure.index_files``) instead of fitting:

- **Key** (:func:`cache_key`): sha256 over the method name, its parameters validated against the registry
  (defaults filled in, canonical JSON) and its fixed settings, :data:`index_files.FORMAT_VERSION`, the
  lemmatiser's version, the source code of the ``detection`` package (so a deployment that changes how any
  retriever analyses or weighs text never loads an index the old code fitted) and the corpus content (segment
  ids in order and the exact texts the retriever fits on). Nothing of a path or a database id enters it; an
  entry's folder is named by the hex key only.
- **Written atomically** (a temporary folder, then a rename; two writers of one key keep one), **checked on
  load** (the manifest's shapes, dtypes and file sizes): a damaged entry (arrays, or a manifest that is missing,
  unreadable or of another format) is removed and reported as a miss, so the caller fits again and never uses
  it, and the fresh fit can take its place.
- **Fitted once at a time**: :meth:`IndexCache.fit_or_load` holds the key's lock file (an exclusive ``flock``
  under ``.locks/``) while it fits, and looks again once it has the lock, so two jobs or workers that start on
  a cold cache together fit once: the second waits and loads the first's entry. The kernel drops the lock when
  its holder exits, crashed or not; a lock that cannot be taken (a file system without ``flock``) only means
  the fit may be done twice, never a wrong index.
- **Bounded**: after each store the least recently used entries (a load or store marks an entry used) are
  removed until the cache holds at most ``max_bytes`` (a folder left without its manifest counts as the least
  recently used); an index larger than that is not stored. ``max_bytes`` 0 turns the cache off: nothing is
  loaded or stored.

Pure: no Django (the jobs pass ``VAR_DIR/index-cache`` and the ``INDEX_CACHE_MAX_BYTES`` setting).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np

from . import index_files

KEY_RE = re.compile(r"^[0-9a-f]{64}$")
_STALE_TMP_S = 3600  # a temporary folder this old is a writer that died


def _content_version() -> dict:
    """What else decides the analysed terms: the lemmatiser's rules and the simplemma release."""
    from importlib.metadata import PackageNotFoundError, version

    from detection.latin.lemmatize import LEMMATIZER_VERSION

    try:
        simplemma = version("simplemma")
    except PackageNotFoundError:  # pragma: no cover - a dependency of the project
        simplemma = ""
    return {"lemmatizer": LEMMATIZER_VERSION, "simplemma": simplemma}


def source_digest(package: str | os.PathLike) -> str:
    """sha256 of a package's Python sources: every file's path within it and its bytes."""
    package = Path(package)
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@cache
def _code_version() -> str:
    """The ``detection`` package's sources (retrievers, analysers, lemmatisers): any change to them is a new key,
    so an index fitted by other code is never loaded."""
    return source_digest(Path(__file__).resolve().parents[2])


def _update_strings(h, values: Sequence[str]) -> None:
    """Hash a list of strings unambiguously: the count, every length, then the texts end to end."""
    values = list(values)
    h.update(np.int64(len(values)).tobytes())
    h.update(np.fromiter(map(len, values), np.int64, len(values)).tobytes())
    h.update("".join(values).encode("utf-8", "surrogatepass"))


def cache_key(method: str, params: dict | None, source_ids: Sequence[str], source_texts: Sequence[str]) -> str:
    """The hex sha256 naming the index ``method`` with ``params`` (configured here) fits on these sources."""
    from .. import registry

    return config_cache_key(registry.configure(method, params or {}), source_ids, source_texts)


def config_cache_key(config, source_ids: Sequence[str], source_texts: Sequence[str]) -> str:
    """The hex sha256 naming the index a configured method fits on these sources: keyed on the
    ``MethodConfig``'s digest (its name and validated parameters, defaults filled in), not validated again."""
    from .. import registry

    source_ids, source_texts = list(source_ids), list(source_texts)
    if len(source_ids) != len(source_texts):
        raise ValueError("source_ids and source_texts differ in length")
    head = {"config": config.digest, "fixed": dict(registry.get_spec(config.name).fixed), "format": index_files.FORMAT_VERSION,
            "code": _code_version(), **_content_version()}
    h = hashlib.sha256(json.dumps(head, sort_keys=True, separators=(",", ":"), default=str).encode())
    _update_strings(h, source_ids)
    _update_strings(h, source_texts)
    return h.hexdigest()


class IndexCache:
    """Fitted indexes under ``root``, one folder per key, at most ``max_bytes`` in all."""

    def __init__(self, root: str | os.PathLike, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = int(max_bytes)

    def path(self, key: str) -> Path:
        if not KEY_RE.match(key or ""):
            raise ValueError("an index cache key is 64 lowercase hex digits")
        return self.root / key

    def _touch(self, folder: Path) -> None:
        now = time.time_ns()
        os.utime(folder / index_files.MANIFEST, ns=(now, now))

    @property
    def enabled(self) -> bool:
        return self.max_bytes > 0

    def _drop_if_damaged(self, folder: Path) -> bool:
        """True when ``folder`` holds a readable manifest; a folder without one (a crash mid-write of the
        manifest, an interrupted removal) is removed, so that a fresh fit can take its place."""
        if index_files.read_manifest(folder) is not None:
            return True
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        return False

    def load(self, key: str, retriever) -> bool:
        """Make ``retriever`` (built with the key's method and parameters) the cached fitted index: True, or
        False on a miss (always, with the cache off). A damaged entry is removed (and is a miss)."""
        folder = self.path(key)
        if not self.enabled or not index_files.can_save(retriever) or not self._drop_if_damaged(folder):
            return False
        try:
            retriever.use_index_arrays(index_files.load_arrays(folder))
        except (index_files.BadIndex, KeyError, IndexError, TypeError, ValueError):
            # damaged, or arrays this retriever does not read (fit() then replaces what was half set)
            shutil.rmtree(folder, ignore_errors=True)
            return False
        try:
            self._touch(folder)
        except OSError:  # evicted meanwhile by another process: the arrays stay mapped
            pass
        return True

    def store(self, key: str, retriever) -> bool:
        """Store a fitted ``retriever`` under ``key`` and evict down to ``max_bytes``; False when it has no saved
        form, is larger than the whole cache, or the disk refuses (the caller just goes on without a cache)."""
        folder = self.path(key)
        if not self.enabled or not index_files.can_save(retriever):
            return False
        if self._drop_if_damaged(folder):
            self._touch(folder)
            return True
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            written = index_files.save_index(retriever, folder, meta={"key": key})
        except OSError:
            return False
        if not written:
            return False
        if written > self.max_bytes:
            shutil.rmtree(folder, ignore_errors=True)
            return False
        self._touch(folder)
        self.evict(keep=key)
        return True

    def entries(self) -> list[tuple[int, int, str]]:
        """``(last used ns, bytes, key)`` of every complete entry, least recently used first."""
        out = []
        if not self.root.is_dir():
            return out
        for folder in self.root.iterdir():
            if not KEY_RE.match(folder.name):
                continue
            try:
                size = sum(p.stat().st_size for p in folder.iterdir())
            except OSError:  # removed meanwhile
                continue
            try:
                used = (folder / index_files.MANIFEST).stat().st_mtime_ns
            except OSError:  # no manifest (a removal that was interrupted): the first to go
                used = 0
            out.append((used, size, folder.name))
        return sorted(out)

    def size_of(self, key: str) -> int:
        return sum(size for _, size, k in self.entries() if k == key)

    def evict(self, keep: str | None = None) -> list[str]:
        """Remove least recently used entries (never ``keep``) until the cache holds at most ``max_bytes``, and
        temporary folders of writers that died and old lock files of keys without an entry (an index too large
        to store); the keys removed."""
        now = time.time()
        for tmp in self.root.glob(".tmp-*"):
            try:
                if now - tmp.stat().st_mtime > _STALE_TMP_S:
                    shutil.rmtree(tmp, ignore_errors=True)
            except OSError:
                pass
        for lock in self.root.glob(".locks/*"):
            try:
                if now - lock.stat().st_mtime > _STALE_TMP_S and not (self.root / lock.name).is_dir():
                    lock.unlink()
            except OSError:
                pass
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = []
        for _, size, key in entries:
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            shutil.rmtree(self.root / key, ignore_errors=True)
            self._lock_path(key).unlink(missing_ok=True)
            total -= size
            removed.append(key)
        return removed

    def _lock_path(self, key: str) -> Path:
        return self.root / ".locks" / key

    @contextmanager
    def _fitting(self, key: str) -> Iterator[None]:
        """Hold ``key``'s lock (blocking) while the body runs; without one when the lock file cannot be made."""
        fd = None
        try:
            self._lock_path(key).parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._lock_path(key), os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # releases the lock

    def fit_or_load(self, retriever, key: str, fit: Callable[[], object]) -> str:
        """``"cache"`` when the index under ``key`` was loaded into ``retriever``; else ``fit()`` (which fits
        ``retriever``), stores the result and returns ``"built"``. One process fits a key at a time: a second one
        waits for the first's fit and loads it (``"cache"``)."""
        if self.load(key, retriever):
            return "cache"
        if not self.enabled or not index_files.can_save(retriever):
            fit()
            return "built"
        with self._fitting(key):  # another process fitting this key: wait for it, then load what it stored
            if self.load(key, retriever):
                return "cache"
            fit()
            self.store(key, retriever)
        return "built"
