"""Fixtures: the real 545-pair Loci Similes files and the DBBE STS gold, imported through the services."""
from pathlib import Path

import pytest
from django.conf import settings

LOCI_DIR = Path(settings.DATA_DIR) / "locisimiles"
WITH_TEXT = LOCI_DIR / "pairs_545_with_text.csv"
REF_TYPE = LOCI_DIR / "pairs_545_ref_type.csv"
STS_FILE = Path(settings.DATA_DIR) / "dbbe" / "STS_benchmark_medievalGreek.tsv"


@pytest.fixture
def loci_version(db):
    from benchmarks.services import benchmark_import_545

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    return version


@pytest.fixture
def gold_set(db):
    from benchmarks.services import gold_set_import_file

    gold_set, _ = gold_set_import_file(path=STS_FILE, name="dbbe-sts")
    return gold_set


@pytest.fixture
def models_dir(tmp_path):
    """An empty models directory for the test (trained models are written there)."""
    from detection.methods.infrastructure import model_store

    with model_store.using(tmp_path / "models") as path:
        path.mkdir()
        yield path
