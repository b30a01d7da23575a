"""The shipped Tesserae archive (`data/tesserae/`, the corpora page's source ``tesserae-la``) is the one in
``../shared/data/latin_texts/tesserae_corpus/``: the upstream test file ``test.tester`` (Aeneid 1.1 in two lines,
which ranked 2nd and 4th for "arma virumque cano" over the whole corpus) is not in it, so no build indexes it."""
import tarfile
from pathlib import Path

from detection.corpus import corpus_files

SHIPPED = Path(__file__).resolve().parents[3] / "data" / "tesserae" / "tesserae_la.tar.xz"


def test_the_shipped_archive_holds_no_test_file_and_a_build_reads_none():
    with tarfile.open(SHIPPED) as tf:
        names = [Path(m.name).name for m in tf if m.isfile()]
    assert "vergil.aeneid.tess" in names and not [n for n in names if n.startswith("test.")]
    assert sum(n.endswith((".tess", ".txt")) for n in names) == 619  # data/LICENSES.md, docs/corpus_search.md
    report = corpus_files.new_report()
    read = [w.key for w in corpus_files.read_corpus(SHIPPED, report=report,
                                                    only=lambda key: key.startswith(("test.", "vergil.aen")))]
    assert read == ["vergil.aeneid"]
