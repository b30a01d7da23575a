"""A fitted retriever's index as plain arrays in a folder, so one process fits and others load it.

A retriever that can be saved has ``index_arrays() -> {name: ndarray}`` (numbers and fixed-width unicode
only) and ``use_index_arrays(arrays)``, which makes it a fitted retriever again (the one that was saved:
the same lists and scores). Each array is one ``.npy`` file; loading memory-maps them (``mmap_mode="r"``,
``allow_pickle=False``), so nothing is unpickled and the pages a process never reads are never read.

The sharded jobs use it: the parent of a sharded Loci Similes evaluation fits the pool once and saves it
under the job's work folder; shards on other workers load it instead of fitting again
(``benchmarks.services.evaluation_shards``). The folder's name comes from the job, never from a user.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

MANIFEST = "index.json"


def can_save(retriever) -> bool:
    return callable(getattr(retriever, "index_arrays", None)) and callable(getattr(retriever, "use_index_arrays", None))


def save_index(retriever, folder: str | os.PathLike, *, meta: dict | None = None) -> bool:
    """Write ``retriever``'s fitted index to ``folder`` (replaced whole: written beside it, then renamed).

    Returns False, writing nothing, for a retriever that cannot be saved (no ``index_arrays``, or it
    returns None, e.g. terms that are not strings). ``meta`` (JSON) is stored in the manifest; a loader
    compares it with what it expects (:func:`read_meta`)."""
    if not can_save(retriever):
        return False
    arrays = retriever.index_arrays()
    if arrays is None:
        return False
    folder = Path(folder)
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, arr in arrays.items():
        arr = np.asarray(arr)
        if arr.dtype == object:
            raise TypeError(f"index array {name!r} holds Python objects; save numbers or strings")
        np.save(tmp / f"{name}.npy", arr, allow_pickle=False)
    (tmp / MANIFEST).write_text(json.dumps({"arrays": sorted(arrays), "meta": meta or {}}))
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(tmp, folder)
    return True


def read_meta(folder: str | os.PathLike) -> dict | None:
    """The ``meta`` a saved index was written with; None when there is no (complete) index in ``folder``."""
    try:
        return json.loads((Path(folder) / MANIFEST).read_text()).get("meta", {})
    except (OSError, ValueError):
        return None


def load_arrays(folder: str | os.PathLike) -> dict[str, np.ndarray]:
    """The saved arrays, memory-mapped read-only (never unpickled)."""
    folder = Path(folder)
    names = json.loads((folder / MANIFEST).read_text())["arrays"]
    return {n: np.load(folder / f"{n}.npy", mmap_mode="r", allow_pickle=False) for n in names}


def load_index(retriever, folder: str | os.PathLike) -> bool:
    """Make ``retriever`` (built with the same method and parameters) the fitted one saved in ``folder``.
    False when it cannot load indexes or nothing is saved there."""
    if not can_save(retriever) or read_meta(folder) is None:
        return False
    retriever.use_index_arrays(load_arrays(folder))
    return True


def strings(values) -> np.ndarray:
    """A list of str as a fixed-width unicode array (``np.load`` without pickle reads it back)."""
    values = list(values)
    return np.array(values, dtype=str) if values else np.zeros(0, dtype="<U1")
