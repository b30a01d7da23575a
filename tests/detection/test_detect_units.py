"""``manage.py detect`` with units and the explaining ``channels`` method, on real Lucan and Aeneid lines."""
import csv
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

QUERIES = [("luc. 2.11", "Fatorum immoto divisit limite mundum:"), ("luc. 2.12", "Sed nobis nunc nulla quies"),
           ("luc. 2.113", "Spes una salutis")]
SOURCES = [("verg. aen. 7.313", "at trahere atque moras tantis licet addere rebus,"),
           ("verg. aen. 7.314", "atque immota manet fatis Lavinia coniunx:"),
           ("verg. aen. 2.354", "una salus victis, nullam sperare salutem."),
           ("verg. aen. 1.1", "Arma virumque cano, Troiae qui primus ab oris")]


@pytest.fixture
def files(tmp_path):
    for name, rows in (("q.csv", QUERIES), ("s.csv", SOURCES)):
        with open(tmp_path / name, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["seg_id", "text"])
            w.writerows(rows)
    return tmp_path


def _detect(files, out, *extra):
    call_command("detect", "--query", str(files / "q.csv"), "--source", str(files / "s.csv"), "--output", str(out),
                 *extra, stderr=StringIO())


def test_windows_and_explanations_in_the_csv(files):
    out = files / "out.csv"
    _detect(files, out, "--method", "channels", "--unit", "window-2", "--top-k", "2")
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert list(rows[0]) == ["query_id", "source_id", "rank", "score", "query_lines", "source_lines", "explain"]
    first = rows[0]
    assert first["query_id"] == "luc. 2.11" and first["query_lines"] == "luc. 2.11 | luc. 2.12"
    lines = first["source_lines"].split(" | ")
    assert len(lines) == 2 and "verg. aen. 7.314" in lines and first["source_id"] == lines[0]
    ex = json.loads(first["explain"])
    assert ex["query_lines"] == ["luc. 2.11", "luc. 2.12"] and ex["source_lines"] == lines
    assert ["immoto", "immota"] in next(c for c in ex["channels"] if c["name"] == "edit")["matches"]


def test_json_output_and_line_unit(files):
    out = files / "out.json"
    _detect(files, out, "--method", "channels", "--top-k", "1")
    rows = json.load(open(out, encoding="utf-8"))
    assert [(r["query_id"], r["source_id"]) for r in rows if r["query_id"] != "luc. 2.12"] == [
        ("luc. 2.11", "verg. aen. 7.314"), ("luc. 2.113", "verg. aen. 2.354")]
    assert rows[0]["explain"]["source_lines"] == ["verg. aen. 7.314"]


def test_bm25_output_keeps_its_columns(files):
    out = files / "out.csv"
    _detect(files, out, "--method", "bm25-lemma")
    assert open(out, encoding="utf-8").readline().strip() == "query_id,source_id,rank,score"


def test_top_k_is_the_prefix_of_a_deeper_run(files):
    a, b = files / "a.csv", files / "b.csv"
    _detect(files, a, "--method", "channels", "--top-k", "2")
    _detect(files, b, "--method", "channels", "--top-k", "4")
    rows_a = [r[:4] for r in csv.reader(open(a, encoding="utf-8"))][1:]
    rows_b = [r[:4] for r in csv.reader(open(b, encoding="utf-8"))][1:]
    assert rows_a == [r for r in rows_b if int(r[2]) <= 2]


@pytest.mark.parametrize("extra, message", [
    (("--unit", "verse"), "unit must be one of line, window-2, window-3, sentence, not 'verse'"),
    (("--method", "channels", "--param", "sound_weight=-2"), "sound_weight"),
    (("--method", "channels", "--param", "synonyms=../x"), "a name, not a path"),
    (("--method", "hybrid", "--param", "candidates=union"), "candidates='union' needs a dense semantic score"),
])
def test_bad_input_is_a_command_error(files, extra, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _detect(files, files / "x.csv", *extra)


def test_the_default_method_explains_the_rows_asked_for(files):
    """No --method: channels (profile verse for lines); --explain top-N explains each query's first N rows only,
    none writes no explanation, all every row; a Parquet output holds the same table."""
    err = StringIO()
    out = files / "out.csv"
    call_command("detect", "--query", str(files / "q.csv"), "--source", str(files / "s.csv"), "--output", str(out),
                 "--top-k", "3", "--explain", "top-1", stderr=err)
    assert "(channels, profile verse;" in err.getvalue()
    rows = list(csv.DictReader(open(out, encoding="utf-8")))
    assert {r["rank"] for r in rows} >= {"1", "2"}
    assert all(bool(r["explain"]) == (r["rank"] == "1") for r in rows)
    _detect(files, files / "none.csv", "--top-k", "3", "--explain", "none")
    assert open(files / "none.csv", encoding="utf-8").readline().strip() == "query_id,source_id,rank,score"
    _detect(files, files / "all.parquet", "--top-k", "3", "--explain", "all")
    import pyarrow.parquet as pq

    table = pq.read_table(files / "all.parquet").to_pylist()
    assert [(r["query_id"], r["source_id"], str(r["rank"])) for r in table] == [
        (r["query_id"], r["source_id"], r["rank"]) for r in rows]
    assert all(json.loads(r["explain"])["channels"] for r in table)


@pytest.mark.parametrize("bad", ["top", "top-0", "top-x", "some", "10"])
def test_a_bad_explain_value_is_refused_naming_the_choices(files, bad):
    with pytest.raises(CommandError, match="--explain must be none, top-N .* or all"):
        _detect(files, files / "out.csv", "--explain", bad)
    assert not (files / "out.csv").exists()


def test_help_names_the_default_and_every_retriever_and_reranker(monkeypatch):
    from django.core.management import load_command_class

    from detection.methods import registry

    monkeypatch.setenv("COLUMNS", "1000")  # one line per paragraph: names are not hyphen-wrapped
    text = load_command_class("detection", "detect").create_parser("manage.py", "detect").format_help()
    assert "default retriever: channels (profile verse for lines and windows, prose for sentences" in text
    for name in registry.names(kind="retriever", language="la") + registry.names(kind="reranker", language="la"):
        assert name in text
    assert "feature-ltr" in text
