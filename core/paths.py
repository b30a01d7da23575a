"""Where the shared data folder is: the one place that reads ``SIMILIA_SHARED_DATA_DIR`` (pure: no Django).

The Django setting ``SHARED_DATA_DIR`` and the pure packages (``benchmarks.loci.data``) both call
:func:`shared_data_dir`, so a deployment, a checkout and a git worktree find the same folder.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SHARED_DATA_ENV = "SIMILIA_SHARED_DATA_DIR"
REPO_DIR = Path(__file__).resolve().parent.parent


def shared_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$SIMILIA_SHARED_DATA_DIR`` when set; else the nearest ``shared/data`` folder beside the repository
    or one of its parents (a worktree at ``/work/wt/<name>`` finds ``/work/shared/data``); else
    ``<repository>/../shared/data``, which may not exist (callers say so when a file is missing)."""
    value = (os.environ if environ is None else environ).get(SHARED_DATA_ENV, "").strip()
    if value:
        return Path(value)
    for folder in REPO_DIR.parents:
        candidate = folder / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return REPO_DIR.parent / "shared" / "data"
