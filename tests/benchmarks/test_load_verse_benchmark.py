"""``load_benchmarks --skip-bad-rows`` on the real verse benchmark (Lucan -> Virgil) written as three plain files:
the poems' lines with the seven mis-numbered duplicate Lucan ids, the commentary parallels labelled ``1``."""
import csv
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.models import BenchmarkVersion, GoldReference
from core.paths import shared_data_dir

DATA = shared_data_dir()
LUCAN = DATA / "latin_texts" / "tesserae" / "lucan.bellum_civile.tess"
VERGIL = DATA / "latin_texts" / "tesserae" / "vergil.aeneid.tess"
GOLD = DATA / "lucan_vergil" / "all_lucan.txt"
pytestmark = pytest.mark.skipif(not (LUCAN.is_file() and VERGIL.is_file() and GOLD.is_file()),
                                reason="the shared verse benchmark is not available")


def _corpus(tess, out, prefix):
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text"])
        for line in tess.read_text(encoding="utf-8").splitlines():
            ref, _, text = line.partition("\t")
            if text.strip():
                w.writerow([f"{prefix} {ref.strip('<> ').split()[-1]}", text.strip()])


@pytest.mark.django_db
def test_the_verse_benchmark_loads_with_its_bad_rows_skipped_and_counted(tmp_path):
    _corpus(LUCAN, tmp_path / "q.csv", "luc.")
    _corpus(VERGIL, tmp_path / "s.csv", "verg. aen.")
    with open(tmp_path / "gold.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "source_id", "label"])
        for row in GOLD.read_text(encoding="utf-8").splitlines()[1:]:
            c = row.split("\t")
            if len(c) >= 7:
                w.writerow([f"luc. {int(c[0])}.{int(c[1])}", f"verg. aen. {int(c[3])}.{int(c[4])}", "1"])
    files = ["--queries", str(tmp_path / "q.csv"), "--sources", str(tmp_path / "s.csv"),
             "--gold", str(tmp_path / "gold.csv"), "--name", "lucan-vergil"]
    with pytest.raises(CommandError, match="seg_id"):  # without the option: the first duplicate id stops it
        call_command("load_benchmarks", *files)
    assert not BenchmarkVersion.objects.exists()

    out = io.StringIO()
    call_command("load_benchmarks", *files, "--skip-bad-rows", stdout=out)
    text = out.getvalue()
    version = BenchmarkVersion.objects.get(benchmark__name="lucan-vergil")
    skipped = version.provenance["skipped_rows"]
    duplicates = [m for m in skipped if "duplicate seg_id" in m]
    # the seven mis-numbered lines of the benchmark's books (2-10) and one of book 1, each a later Lucan row
    assert len([m for m in duplicates if "'luc. 1." not in m]) == 7 and all("'luc. " in m for m in duplicates)
    assert f"skipped {len(skipped)} bad row(s)" in text
    assert any("verg. aen. 8.860" in m for m in skipped)  # the upstream row naming a line book 8 lacks
    n = GoldReference.objects.filter(version=version).count()
    assert n > 800 and f"{n} gold references (imported)" in text
    # a label 1 is a parallel of unknown type, not a citation
    assert set(GoldReference.objects.filter(version=version).values_list("ref_type", flat=True)) == {"link"}
