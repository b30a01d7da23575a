"""A small real corpus (Tesserae texts from ../shared: Virgil's Eclogues, Horace's Ars poetica, Cicero's Pro
Archia) with one malformed file, built once per session into a temporary folder."""
import tarfile
from pathlib import Path

import pytest

from core.paths import shared_data_dir

ARCHIVE = shared_data_dir() / "latin_texts" / "tesserae_corpus" / "tesserae_la.tar.xz"
WORKS = ("vergil.eclogues", "horace.ars_poetica", "cicero.pro_archia")
BAD = "<bad. 1.1>\tprimus versus bonus\nthis line has no reference\n<bad. 1.3>\t\n<bad. 1.4>\tquartus versus bonus\n"


def _extract(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(ARCHIVE) as tf:
        for m in tf:
            name = Path(m.name).name
            if name.removesuffix(".tess") in WORKS and m.isfile():
                (dest / name).write_bytes(tf.extractfile(m).read())
    (dest / "bad.carmen.tess").write_text(BAD, encoding="utf-8")
    return dest


@pytest.fixture(scope="session")
def small_corpus_dir(tmp_path_factory) -> Path:
    if not ARCHIVE.is_file():
        pytest.fail(f"the Tesserae archive is missing: {ARCHIVE}")
    return _extract(tmp_path_factory.mktemp("tess") / "texts")


@pytest.fixture(scope="session")
def built(small_corpus_dir, tmp_path_factory):
    """(index folder, settings, read report, manifest) of the small corpus."""
    from detection.channels import corpus_index
    from detection.corpus import corpus_files

    report = corpus_files.new_report()
    settings = corpus_index.channel_settings()
    root = tmp_path_factory.mktemp("idx")
    works = list(corpus_files.read_corpus(small_corpus_dir, report=report))
    manifest = corpus_index.build_index(root, "small", works, settings, part_size=1000)
    return root / "small", settings, report, manifest
