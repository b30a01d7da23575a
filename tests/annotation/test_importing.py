"""Parsing verse files: the real DBBE files as they are, and every kind of bad input."""
import json
import unicodedata

import pytest

from annotation.importing import VerseFileError, parse_verse_file

from .conftest import SHARED_SAMPLE, STS


def test_sts_file_gives_verses_from_both_columns_and_three_batches():
    parsed = parse_verse_file(STS.read_bytes(), STS.name)
    assert parsed.format == "dbbe-sts"
    assert len(parsed.verses) == 100
    refs = {b.reference_id: b for b in parsed.batches}
    assert set(refs) == {"16977 1", "17148 1", "16977 2"}
    assert [len(refs[r].candidate_ids) for r in ("16977 1", "17148 1", "16977 2")] == [99, 99, 98]
    assert refs["16977 1"].gold_scores["20963 1"] == 1.0
    verse = next(v for v in parsed.verses if v.verse_id == "16977 1")
    assert verse.occurrence_id == "16977" and verse.verse_number == 1
    assert verse.text.startswith("+ Αἶνος θ(ε)ῶ")


@pytest.mark.skipif(not SHARED_SAMPLE.exists(), reason="needs ../shared/data")
def test_verse_sample_ids_from_occurrence_and_order_and_shifted_rows_repaired():
    parsed = parse_verse_file(SHARED_SAMPLE.read_bytes(), SHARED_SAMPLE.name)
    assert parsed.format == "dbbe-verse-sample"
    assert len(parsed.verses) == 1388
    by_id = {v.verse_id: v for v in parsed.verses}
    first = by_id["16982 1"]  # order 0 → verse 1
    assert first.text.startswith("+ ὥσπερ ξένοι") and first.type_id == "2150" and first.group_id == "14872"
    repaired = by_id["17626 2"]  # the upstream row whose verse held an unquoted comma
    nfc = lambda text: unicodedata.normalize("NFC", text)  # noqa: E731
    assert nfc(repaired.text) == nfc("ἐκχεῖ τὸ ῥεῦμα | τῶν ἀειρρύτων λόγων, |")
    assert parsed.notes == ["9 row(s) repaired: the verse contained an unquoted comma and the columns had shifted."]


def test_generic_csv_tsv_and_json():
    csv_data = "verse_id,text,translation,type\n1 1,α β,a b,7\n1 2,γ δ,,\n".encode()
    parsed = parse_verse_file(csv_data, "v.csv")
    assert [(v.verse_id, v.translation, v.type_id) for v in parsed.verses] == [("1 1", "a b", "7"), ("1 2", "", "")]
    tsv = "verse_id\ttext\nx\tα\n".encode()
    assert parse_verse_file(tsv, "v.tsv").verses[0].text == "α"
    doc = {"verses": [{"verse_id": "a", "text": "α"}, {"verse_id": "b", "text": "β"}, {"verse_id": "c", "text": "γ"}],
           "batches": [{"reference": "a", "candidates": ["b", "c"]}]}
    parsed = parse_verse_file(json.dumps(doc).encode(), "v.json")
    assert parsed.batches[0].candidate_ids == ["b", "c"]


@pytest.mark.parametrize("data, message", [
    (b"id,words\n1,a\n", "line 1: unrecognised columns"),
    (b"verse_id,text\n1 1,alpha\n1 1,beta\n", "line 3: duplicate verse id '1 1'"),
    (b"verse_id,text\n1 1,alpha\n1 2,   \n", "line 3: verse '1 2' has empty text"),
    ("verse_id,text\n1 1,ἄλφα\n".encode("utf-16"), "not UTF-8"),
    ("verse_id,text\n1 1,a\n2 1,\xe4\n".encode("latin-1"), "line 3: the file is not UTF-8"),
    (b"verse_id,text\n1 1,a,extra\n", "line 2: expected 2 columns, found 3"),
    (b"", "the file is empty"),
    (b'{"verses": [{"verse_id": "a", "text": "x"}], "batches": [{"reference": "zz", "candidates": ["a"]}]}',
     "batch 1: verse 'zz' is not among the verses"),
    (b'{"verses": [{"verse_id": "a"', "invalid JSON"),
    (b"verse1_id\tverse2_id\tverse1\tverse2\tnormalized_counts\n1 1\t2 1\ta\tb\tmany\n", "line 2: normalized_counts 'many'"),
])
def test_bad_files_name_the_line_and_the_problem(data, message):
    with pytest.raises(VerseFileError) as info:
        parse_verse_file(data, "upload.csv")
    assert message in str(info.value)
    assert "upload.csv" in str(info.value)


@pytest.mark.parametrize("number, words", [("9" * 5000, "5000 digits"), ("1" + "0" * 309, "out of range"),
                                           ("1e400", "finite")])
def test_a_number_no_column_holds_is_refused_with_its_place(number, words):
    """Read by the one guarded reader (core.safejson): the file, the place and why, never a traceback."""
    text = f'[{{"verse_id": "a", "text": "x"}}, {{"verse_id": "b", "text": "y", "n": {number}}}]'
    with pytest.raises(VerseFileError, match=rf"^v\.json: \[1\]\.n: .*{words}"):
        parse_verse_file(text.encode(), "v.json")
