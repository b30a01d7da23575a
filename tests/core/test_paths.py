"""One way to find the shared data folder: the setting and the pure Loci Similes loader read the same helper."""
from pathlib import Path

from django.conf import settings

from benchmarks.loci import data
from core.paths import REPO_DIR, SHARED_DATA_ENV, shared_data_dir


def test_the_variable_wins_and_the_default_is_found_beside_the_repository(tmp_path, monkeypatch):
    assert shared_data_dir({SHARED_DATA_ENV: str(tmp_path)}) == tmp_path
    found = shared_data_dir({})
    assert found.parts[-2:] == ("shared", "data")
    assert found.is_dir() or found == REPO_DIR.parent / "shared" / "data"
    if found.is_dir():  # the nearest shared/data above the checkout (a worktree finds its main checkout's)
        assert REPO_DIR.is_relative_to(found.parent.parent)
    monkeypatch.setenv(SHARED_DATA_ENV, str(tmp_path))
    assert data.default_data_dir() == tmp_path / "locisimiles"


def test_the_setting_is_the_helpers_answer():
    assert Path(settings.SHARED_DATA_DIR) == shared_data_dir()
