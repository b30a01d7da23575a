"""One reading of segment files (issue 27): `evaluate_retrieval` refuses a repeated segment id with the same
message as `detect` (it kept the first row silently before), naming the file and both lines."""
import pytest

from benchmarks.loci import data, loci_commands
from detection import commands as latin_commands
from detection.latin.errors import InputError

SOURCES = "seg_id,text\ns1,arma uirumque cano\ns2,troiae qui primus ab oris\n"
QUERIES = "seg_id,text\nq1,arma uirumque canebat\nq2,\"troiae qui\nprimus\"\nq1,italiam fato profugus\n"
GOLD = "query_id,source_id,label\nq1,s1,cit.\nq2,s2,cf.\n"
MESSAGE = "line 5: duplicate seg_id 'q1' (first on line 2)"


@pytest.fixture
def files(tmp_path):
    for name, text in (("q.csv", QUERIES), ("s.csv", SOURCES), ("g.csv", GOLD)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_evaluate_retrieval_and_detect_refuse_a_repeated_id_alike(files, capsys, tmp_path):
    code_detect = latin_commands.main(["detect", "--query", str(files / "q.csv"), "--source", str(files / "s.csv"),
                                       "--output", str(tmp_path / "out.csv"), "--method", "bm25-surface"])
    detect_err = capsys.readouterr().err
    code_eval = loci_commands.main(["evaluate_retrieval", "--queries", str(files / "q.csv"), "--sources",
                                    str(files / "s.csv"), "--gold", str(files / "g.csv"), "--method", "bm25-surface"])
    eval_err = capsys.readouterr().err
    assert code_detect == code_eval == 2
    assert MESSAGE in detect_err and MESSAGE in eval_err
    assert detect_err.strip().splitlines()[-1] == eval_err.strip().splitlines()[-1]
    assert not (tmp_path / "out.csv").exists()


def test_the_loader_names_the_file_and_line(files):
    with pytest.raises(InputError) as caught:
        data.load_segments_csv(files / "q.csv")
    assert caught.value.line == 5 and caught.value.path == str(files / "q.csv")
    assert [s.seg_id for s in data.load_segments_csv(files / "s.csv")] == ["s1", "s2"]
