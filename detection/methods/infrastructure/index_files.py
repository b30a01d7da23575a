"""A fitted retriever's index as plain arrays in a folder, so one process fits and others load it.

A retriever that can be saved has ``index_arrays() -> {name: ndarray}`` (numbers and fixed-width unicode
only) and ``use_index_arrays(arrays)``, which makes it a fitted retriever again (the one that was saved:
the same lists and scores). Each array is one ``.npy`` file; loading memory-maps them (``mmap_mode="r"``,
``allow_pickle=False``), so nothing is unpickled and the pages a process never reads are never read.

The manifest (``index.json``, written last) records every array's shape, dtype and file size; a load checks
them before the retriever sees an array, so a truncated or partly written folder raises :class:`BadIndex`
instead of giving wrong results. The folders live in the content-addressed index cache
(``detection.methods.infrastructure.index_cache``), named by their key, never by a user.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np

MANIFEST = "index.json"
FORMAT_VERSION = 1  # bump when the files or a retriever's index_arrays change meaning: old entries miss


class BadIndex(ValueError):
    """A saved index that is incomplete, truncated or not what its manifest says."""


def can_save(retriever) -> bool:
    return callable(getattr(retriever, "index_arrays", None)) and callable(getattr(retriever, "use_index_arrays", None))


def save_index(retriever, folder: str | os.PathLike, *, meta: dict | None = None) -> int:
    """Write ``retriever``'s fitted index to ``folder``: written in a temporary folder beside it, then renamed
    (a reader sees the whole folder or none). Returns the bytes written; 0, writing nothing, for a retriever
    that cannot be saved (no ``index_arrays``, or it returns None, e.g. terms that are not strings). A folder
    that already exists is kept (its name is the content's key: another process wrote the same index).
    ``meta`` (JSON) is stored in the manifest."""
    if not can_save(retriever):
        return 0
    arrays = retriever.index_arrays()
    if arrays is None:
        return 0
    folder = Path(folder)
    tmp = folder.with_name(f".tmp-{folder.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir(parents=True)
    try:
        listed = {}
        for name, arr in arrays.items():
            arr = np.asarray(arr)
            if arr.dtype == object:
                raise TypeError(f"index array {name!r} holds Python objects; save numbers or strings")
            path = tmp / f"{name}.npy"
            np.save(path, arr, allow_pickle=False)
            listed[name] = {"shape": list(arr.shape), "dtype": arr.dtype.str, "bytes": path.stat().st_size}
        (tmp / MANIFEST).write_text(json.dumps({"format": FORMAT_VERSION, "arrays": listed, "meta": meta or {}}))
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / MANIFEST).exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # written meanwhile by another process: the same content
        return sum(a["bytes"] for a in listed.values())
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_manifest(folder: str | os.PathLike) -> dict | None:
    """The manifest of a saved index; None when there is no (complete) index in ``folder``."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == FORMAT_VERSION else None


def load_arrays(folder: str | os.PathLike) -> dict[str, np.ndarray]:
    """The saved arrays, memory-mapped read-only (never unpickled), each checked against the manifest (file
    size, shape, dtype): :class:`BadIndex` when one differs or is missing."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        raise BadIndex(f"no complete index in {folder.name}")
    out = {}
    for name, want in manifest["arrays"].items():
        path = folder / f"{name}.npy"
        try:
            if path.stat().st_size != want["bytes"]:
                raise BadIndex(f"{name}.npy has {path.stat().st_size} bytes, the manifest says {want['bytes']}")
            arr = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:
            raise BadIndex(f"{name}.npy: {exc}") from None
        if list(arr.shape) != want["shape"] or arr.dtype.str != want["dtype"]:
            raise BadIndex(f"{name}.npy is {arr.dtype.str}{list(arr.shape)}, the manifest says "
                           f"{want['dtype']}{want['shape']}")
        out[name] = arr
    return out


def load_index(retriever, folder: str | os.PathLike) -> bool:
    """Make ``retriever`` (built with the same method and parameters) the fitted one saved in ``folder``.
    False when it cannot load indexes or nothing is saved there; :class:`BadIndex` for a damaged folder."""
    if not can_save(retriever) or read_manifest(folder) is None:
        return False
    retriever.use_index_arrays(load_arrays(folder))
    return True


def strings(values) -> np.ndarray:
    """A list of str as a fixed-width unicode array (``np.load`` without pickle reads it back)."""
    values = list(values)
    return np.array(values, dtype=str) if values else np.zeros(0, dtype="<U1")
