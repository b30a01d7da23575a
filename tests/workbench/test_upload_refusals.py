"""Uploads that used to be a server error or were stored as they came (issue 29): a NUL byte (a 500 on
PostgreSQL), BEL and an RTL override, a header of a million columns, a million-segment CSV (now refused where the
limit is passed, while reading), TEI nested 1,000 deep (recursion); and `/workbench/compare/?a=²`."""
import io

import pytest

from core.text_checks import first_control_character
from detection.latin.readers import MAX_TEI_DEPTH
from workbench.engine.uploads import UploadError, parse_upload

LIMITS = {"max_bytes": 50_000_000, "max_segments": 1000}
GOOD = "seg_id,text\nv1,Arma uirumque cano\n"


@pytest.mark.parametrize(("name", "data", "what"), [
    ("nul.csv", GOOD + "v2,Troiae qui\x00 primus\n", "U+0000 NUL"),
    ("nul.tess", "<v 1.1>\tArma uirumque\n<v 1.2>\tTroiae\x00 qui\n", "U+0000 NUL"),
    ("nul.txt", "Arma uirumque cano.\n\nTroiae\x00 qui primus.\n", "U+0000 NUL"),
    ("bel.csv", GOOD + "v2,Troiae \x07qui primus\n", "U+0007 BEL"),
    ("rtl.csv", GOOD + "v2,Troiae \u202equi primus\n", "U+202E RIGHT-TO-LEFT OVERRIDE"),
])
def test_control_characters_are_refused_naming_line_and_column(name, data, what):
    with pytest.raises(UploadError) as refused:
        parse_upload(name, data.encode(), **LIMITS)
    message = str(refused.value)
    assert message.startswith(f"{name}, line ") and what in message and "column" in message


def test_tabs_and_line_breaks_are_text():
    assert first_control_character("a\tb\r\nc\n") is None
    assert first_control_character("ab\ncd\x1be") == (2, 3, "U+001B ESC")


def test_a_csv_with_too_many_columns_is_refused_at_its_header():
    header = ",".join(["seg_id", "text"] + [f"c{i}" for i in range(1_000_000)])
    with pytest.raises(UploadError, match=r"line 1: the header has 1,000,002 columns; the limit is 50"):
        parse_upload("wide.csv", (header + "\nv1,Arma\n").encode(), **LIMITS, max_columns=50)
    with pytest.raises(UploadError, match=r"line 3: row has 60 fields; the limit is 50"):
        parse_upload("wide.csv", (GOOD + "v2,Troia" + ",x" * 58 + "\n").encode(), **LIMITS, max_columns=50)


def test_a_million_segment_csv_is_refused_where_it_passes_the_limit():
    rows = "".join(f"v{i},Arma uirumque cano\n" for i in range(1_000_000))
    with pytest.raises(UploadError) as refused:
        parse_upload("huge.csv", ("seg_id,text\n" + rows).encode(), **LIMITS)
    # line 1 is the header: the 1,001st segment is on line 1,002, and reading stopped there
    assert "huge.csv, line 1002: more than 1,000 segments; the limit is 1,000" in str(refused.value)


def test_deeply_nested_tei_is_refused_not_a_recursion_error():
    depth = 1000
    xml = ('<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>' + "<div>" * depth + "<p>Arma uirumque</p>"
           + "</div>" * depth + "</body></text></TEI>")
    with pytest.raises(UploadError, match=f"nested more than {MAX_TEI_DEPTH} deep"):
        parse_upload("deep.xml", xml.encode(), **LIMITS)


@pytest.mark.django_db
def test_the_api_answers_a_nul_upload_with_400_and_stores_nothing(client_for):
    from workbench.models import Document

    f = io.BytesIO((GOOD + "v2,Troiae\x00 qui\n").encode())
    f.name = "nul.csv"
    response = client_for("researcher").post("/api/v1/workbench/documents/", {"file": f}, format="multipart")
    assert response.status_code == 400 and "U+0000 NUL" in response.json()["detail"]
    assert not Document.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["a=²&b=²", "a=1&b=٣", "a=99999999999999999999&b=1", "a=x"])
def test_compare_with_ids_that_are_not_run_numbers_is_400(client, users, query):
    client.force_login(users["researcher"])
    response = client.get(f"/workbench/compare/?{query}")
    assert response.status_code == 400 and "run numbers" in response.content.decode()


def test_verse_files_and_pilot_uploads_refuse_control_characters_too(db):
    from annotation.importing import VerseFileError, parse_verse_file
    from benchmarks.services.runs import RunError, pilot_verses_upload

    with pytest.raises(VerseFileError, match=r"verses.csv, line 3, column 10: the control character U\+0007 BEL"):
        parse_verse_file(b"verse_id,text\n1 1,alpha\n1 2,beta \x07gamma\n", "verses.csv")
    with pytest.raises(RunError, match=r"pilot.csv, line 2, column \d+: the control character U\+202E"):
        pilot_verses_upload(name="pilot.csv", data="type_id,id,idoriginal_poem,idgroup,verse\n1,2,3,4,\u202eabc\n"
                            .encode())
