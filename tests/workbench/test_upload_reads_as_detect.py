"""The workbench upload takes what ``manage.py detect`` takes (issue 45): one file with an em dash mis-decoded into
C1 control characters (``â\\x80\\x94``) and a repeated id is read the same way by both, through the same readers:
the dash repaired, the repeated id's later row skipped and counted. A control character that is no mojibake is
still refused by the upload (a stored text; NUL is a server error on PostgreSQL), naming line and column."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from detection.latin.readers import repair_mojibake

MANGLED = "seg_id,text\nq1,Arma uirumque cano \u00e2\x80\x94 Troiae qui primus ab oris\nq1,Italiam fato profugus\n" \
          "q2,urbs antiqua fuit Tyrii tenuere coloni\n"
SOURCE = "seg_id,text\ns1,arma uirumque canebat miles fortis\ns2,urbs antiqua fuit\n"


def test_only_mis_decoded_sequences_with_c1_characters_are_repaired():
    assert repair_mojibake("cano \u00e2\x80\x94 Troiae \u00e2\x80\x9cqui\u00e2\x80\x9d") == "cano \u2014 Troiae \u201cqui\u201d"
    assert repair_mojibake("Ã© Â» caelum") == "Ã© Â» caelum"  # no C1 character: could be meant, left alone


def _detect(tmp_path, query: str, *extra):
    (tmp_path / "q.csv").write_text(query, encoding="utf-8")
    (tmp_path / "s.csv").write_text(SOURCE, encoding="utf-8")
    err = StringIO()
    call_command("detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"), "--output",
                 str(tmp_path / "out.json"), "--method", "bm25-lemma", "--top-k", "1", *extra, stderr=err)
    return json.loads((tmp_path / "out.json").read_text(encoding="utf-8")), err.getvalue()


@pytest.mark.django_db
def test_the_same_file_is_taken_by_detect_and_by_the_upload(tmp_path, users):
    from workbench.services import document_upload

    rows, said = _detect(tmp_path, MANGLED, "--skip-bad-rows")
    assert sorted({r["query_id"] for r in rows}) == ["q1", "q2"] and "q.csv: 1 row repeating an earlier id skipped" in said

    doc = document_upload(name="mangled.csv", data=MANGLED.encode(), owner=users["researcher"])
    texts = list(doc.segments.order_by("position").values_list("seg_id", "text"))
    assert texts == [("q1", "Arma uirumque cano \u2014 Troiae qui primus ab oris"),
                     ("q2", "urbs antiqua fuit Tyrii tenuere coloni")]
    assert doc.provenance["skipped"] == "1 row repeating an earlier id skipped"
    assert doc.provenance["skipped_rows"] == ["mangled.csv, line 3: duplicate seg_id 'q1' (first on line 2)"]


@pytest.mark.django_db
def test_a_control_character_that_is_no_mojibake_is_refused_by_the_upload_naming_line_and_column(tmp_path, users):
    from workbench.models import Document
    from workbench.services import WorkbenchError, document_upload

    bel = "seg_id,text\nq1,Arma uirumque cano\nq2,urbs \x07antiqua fuit\n"
    rows, _ = _detect(tmp_path, bel)  # detect stores nothing: it searches the text as it is
    assert {r["query_id"] for r in rows} == {"q1", "q2"}
    with pytest.raises(WorkbenchError, match=r"^bel\.csv, line 3, column 9: the control character U\+0007 BEL"):
        document_upload(name="bel.csv", data=bel.encode(), owner=users["researcher"])
    assert not Document.objects.exists()


def test_a_tess_file_repeating_a_reference_keeps_the_first_line():
    from workbench.engine.uploads import parse_upload

    tess = "<verg. aen. 1.1>\tArma uirumque cano.\n<verg. aen. 1.1>\tTroiae qui primus.\n<verg. aen. 1.2>\tItaliam.\n"
    doc = parse_upload("q.tess", tess.encode(), max_bytes=10_000, max_segments=10)
    assert [(s.seg_id, s.text) for s in doc.segments] == [("verg. aen. 1.1", "Arma uirumque cano."),
                                                          ("verg. aen. 1.2", "Italiam.")]
    assert doc.skipped_note()["skipped_rows"] == ["q.tess, line 2: duplicate id 'verg. aen. 1.1' (first on line 1)"]


def test_the_real_lucan_file_with_its_mis_numbered_lines_is_taken():
    from core.paths import shared_data_dir
    from workbench.engine.uploads import parse_upload

    lucan = shared_data_dir() / "latin_texts" / "tesserae" / "lucan.bellum_civile.tess"
    if not lucan.is_file():
        pytest.skip("the shared Tesserae texts are not available")
    doc = parse_upload(lucan.name, lucan.read_bytes(), max_bytes=10**8, max_segments=10**6)
    note = doc.skipped_note()
    assert len(doc.segments) == 8053 and note["skipped"] == "8 lines repeating an earlier id skipped"
    assert note["skipped_rows"][0] == "lucan.bellum_civile.tess, line 430: duplicate id 'luc. 1.430' (first on line 429)"
