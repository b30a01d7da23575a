"""Where models come from: a registered name in the configured models directory, or a hub id.

A user never gives a filesystem path. ``check_model_name`` accepts ``name`` or ``org/name`` made of letters,
digits, ``. _ -`` (no leading dot, no ``..``, no absolute or home paths); ``resolve`` maps a name to its folder
or file in the models directory when it is there, and otherwise returns it unchanged as a hub id, for the
loading library to fetch (or to fail at once, naming it, when the hub is offline).

Fetching from a hub is the operator's decision, off by default: only with ``SIMILIA_ALLOW_HUB_DOWNLOADS=1``
(and no ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``) does a hub id reach the loading library; otherwise a
researcher's ``org/name`` that is not in the models directory is refused at once. The Django settings also set
the libraries' own offline switches unless downloads are allowed (config/settings/base.py).

The directory is ``SIMILIA_MODELS_DIR`` (the Django setting ``MODELS_DIR`` sets it at start-up), default
``var/models``; :func:`using` switches it temporarily (tests).
"""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

DEFAULT_DIR = "var/models"
#: models shipped in git (word vectors with their attribution in data/LICENSES.md); the models directory wins
SHIPPED_DIR = Path(__file__).resolve().parents[3] / "data" / "vectors"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}(/[A-Za-z0-9][A-Za-z0-9._-]{0,99})?$")
_configured: Path | None = None


class ModelUnavailable(RuntimeError):
    """A model that is neither in the models directory nor reachable on a hub."""


def models_dir() -> Path:
    if _configured is not None:
        return _configured
    return Path(os.environ.get("SIMILIA_MODELS_DIR") or DEFAULT_DIR)


def configure(path) -> None:
    global _configured
    _configured = Path(path) if path else None


@contextlib.contextmanager
def using(path):
    """Use ``path`` as the models directory inside the block."""
    global _configured
    previous = _configured
    _configured = Path(path)
    try:
        yield _configured
    finally:
        _configured = previous


def check_model_name(name: str) -> str:
    """``name`` if it is a registered-model name or a hub id, else ValueError saying why."""
    if not isinstance(name, str) or not _NAME_RE.match(name) or ".." in name:
        raise ValueError(f"model must be a model name from the models directory or a hub id like 'org/name' "
                         f"(letters, digits, '.', '_', '-'), not a path: {name!r:.80}")
    return name


def local_path(name: str) -> Path | None:
    """The model's folder/file in the models directory, or None."""
    check_model_name(name)
    path = models_dir() / name
    return path if path.exists() else None


def _on(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in ("1", "true", "yes", "on")


def hub_downloads_allowed() -> bool:
    """True only when the operator turned downloads on (SIMILIA_ALLOW_HUB_DOWNLOADS) and no offline switch is set."""
    return _on("SIMILIA_ALLOW_HUB_DOWNLOADS") and not any(_on(v) for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def shipped_path(name: str) -> Path | None:
    """The folder of a model shipped in ``data/vectors/`` (one with a manifest), or None."""
    check_model_name(name)
    path = SHIPPED_DIR / name
    return path if (path / "manifest.json").is_file() else None


def hub_offline() -> bool:
    return not hub_downloads_allowed()


def resolve(name: str) -> str:
    """A local path for a model in the models directory, else the hub id itself.

    Raises ModelUnavailable at once when the model is not local and the hub is offline.
    """
    path = local_path(name)
    if path is not None:
        return str(path)
    if "/" not in name or hub_offline():
        raise _unavailable(name)
    return name


def _unavailable(name: str) -> ModelUnavailable:
    """The one sentence for a model that is not here and cannot be fetched (the worker's and the API's)."""
    hint = ("; downloads from a hub are off (the operator's setting SIMILIA_ALLOW_HUB_DOWNLOADS)" if "/" in name
            else " (a hub id has the form 'org/name')")
    return ModelUnavailable(f"model {name!r} is not in the models directory {models_dir()} and cannot be fetched "
                            f"from a hub here{hint}: put a local copy in {models_dir() / name}")


def check_fetchable(name: str) -> None:
    """Refuse a hub id (``org/name``) that `resolve` would refuse in the worker, when a run is asked for: the same
    ModelUnavailable, before anything is queued. Names that are no model name are left to the caller's checks."""
    if (isinstance(name, str) and "/" in name and _NAME_RE.match(name) and ".." not in name and hub_offline()
            and local_path(name) is None and shipped_path(name) is None):
        raise _unavailable(name)


def list_local() -> list[str]:
    """Names of the entries in the models directory (one level, and org/name pairs)."""
    root = models_dir()
    if not root.is_dir():
        return []
    out = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        out.append(entry.name)
    return out
