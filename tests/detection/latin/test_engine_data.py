"""Every .tess and TEI file of the shared data parses; real-data segmentation checks."""

from detection.latin.readers import ReadReport, read_tei, read_tess
from detection.latin.segment import segment_units


def test_every_tess_file_parses(data_dir):
    files = sorted((data_dir / "latin_texts/tesserae").glob("*.tess"))
    assert len(files) >= 97
    report = ReadReport()
    for f in files:
        assert read_tess(f, report=report), f
    # no malformed lines; the only rows skipped are references with no text (lacunae), and they are counted
    assert set(report.skipped) <= {"empty text"} and report.skipped["empty text"] < 50


def test_every_tei_file_parses(data_dir):
    files = [f for f in sorted((data_dir / "latin_texts/csel").rglob("*.xml")) if f.name != "__cts__.xml"]
    assert len(files) == 12
    for f in files:
        units = read_tei(f)
        assert units and all(u.text for u in units), f


def test_jerome_letter_ids_match_benchmark(data_dir):
    units = [u for u in read_tess(data_dir / "latin_texts/tesserae/jerome.epistulae.tess") if u.ref.startswith("130.")]
    segs = {s.seg_id: s.text for s in segment_units(units, "hier. epist.")}
    assert segs["hier. epist. 130.5.5.3"].startswith("haesit uox faucibus et inter ruborem")


def test_csel_jerome_refs(data_dir):
    units = read_tei(data_dir / "latin_texts/csel/jerome_epistulae_unikonstanz/CSEL55_corr.xml")
    assert units[0].ref == "71.1.1" and units[0].text.startswith("Nec opinanti mihi")
