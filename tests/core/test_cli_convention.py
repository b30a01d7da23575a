"""One command-line convention (core/cli.py) in every command that runs a detection method: ``--method``
(``list`` prints the registry), repeatable ``--param KEY=VALUE`` checked by the registry, ``--ks`` for cut-offs,
and bad input as one CommandError line."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.cli import CommandInputError, parse_ks, parse_params

STS_HEAD = "verse1_id\tverse2_id\tverse1\tverse2\tnormalized_counts\n"
STS_ROWS = ["1 1\t2 1\tαἶνος θεῶ χάρις\tθεῶ χάρις δόξα\t0.8", "1 1\t3 1\tαἶνος θεῶ χάρις\tβίβλου ταύτης\t0.1",
            "1 1\t4 1\tαἶνος θεῶ χάρις\tχάρις τε καὶ\t0.5"]


def test_parse_params_keeps_text_for_the_registry_and_parses_json_objects():
    assert parse_params(["k1=1.2", "b = 0.5", "model=a=b"]) == {"k1": "1.2", "b": "0.5", "model": "a=b"}
    assert parse_params(['preprocess={"lowercase": false}', "max_features=null"]) == {
        "preprocess": {"lowercase": False}, "max_features": None}
    for bad, message in ((["k1"], "expects KEY=VALUE"), (["=1"], "expects KEY=VALUE"),
                         (["a=1", "a=2"], "given twice"), (["p={oops"], "bad JSON")):
        with pytest.raises(CommandInputError, match=message):
            parse_params(bad)
    assert parse_ks("100, 10,10,1") == (1, 10, 100)
    for bad in ("", "0,10", "ten"):
        with pytest.raises(CommandInputError, match="--ks"):
            parse_ks(bad)


# command -> (arguments besides --method, registry names it lists, a name it must not list)
LISTINGS = {
    "detect": ("bm25-lemma", "levenshtein"),
    "evaluate_retrieval": ("tesserae", "levenshtein"),
    "evaluate": ("tfidf-lemma-12", "levenshtein"),
    "evaluate_similarity": ("semantic_edit", "bm25-lemma"),
    "pilot_sweep": ("levenshtein", "bm25-lemma"),
}


@pytest.mark.parametrize("command", sorted(LISTINGS))
def test_method_list_prints_the_registry_for_every_command(command):
    out = StringIO()
    call_command(command, "--method", "list", stdout=out)
    listed, absent = LISTINGS[command]
    text = out.getvalue()
    assert listed in text and absent not in text.split()
    assert "--param" in text and "default" in text


def _files(tmp_path):
    (tmp_path / "q.csv").write_text("seg_id,text\nq1,arma uirumque cano\nq2,tityre tu patulae\n", encoding="utf-8")
    (tmp_path / "s.csv").write_text("seg_id,text\ns1,arma uirumque cano troiae\ns2,tityre tu patulae recubans\n",
                                    encoding="utf-8")
    (tmp_path / "g.csv").write_text("query_id,source_id\nq1,s1\nq2,s2\n", encoding="utf-8")
    (tmp_path / "sts.tsv").write_text(STS_HEAD + "\n".join(STS_ROWS) + "\n", encoding="utf-8")
    return {"query": str(tmp_path / "q.csv"), "source": str(tmp_path / "s.csv"), "gold": str(tmp_path / "g.csv"),
            "sts": str(tmp_path / "sts.tsv"), "out": str(tmp_path / "out")}


def _commands(f):
    return {
        "detect": ["detect", "--query", f["query"], "--source", f["source"], "--output", f["out"]],
        "evaluate_retrieval": ["evaluate_retrieval", "--queries", f["query"], "--sources", f["source"], "--gold",
                               f["gold"], "--output", f["out"], "--folds", "2"],
        "evaluate_similarity": ["evaluate_similarity", "--gold", f["sts"], "--output", f["out"], "--quiet",
                                "--corpus", f["sts"]],
    }


@pytest.mark.parametrize("command,method,good_param,bad_param,message", [
    ("detect", "bm25-lemma", "k1=1.2", "k1=-1", "parameter 'k1': must be ≥ 0.0"),
    ("detect", "tfidf-surface", "stopwords=false", "path=/etc/passwd", "unknown parameter 'path'"),
    ("evaluate_retrieval", "bm25-surface", "b=0.5", "b=2", "parameter 'b': must be ≤ 1.0"),
    ("evaluate_similarity", "char_ngram", "ngram_max=3", "ngram_max=x", "parameter 'ngram_max': must be an integer"),
])
def test_params_are_checked_by_the_registry_in_every_command(tmp_path, command, method, good_param, bad_param,
                                                             message):
    f = _files(tmp_path)
    argv = _commands(f)[command] + ["--method", method]
    call_command(*argv, "--param", good_param, stdout=StringIO(), stderr=StringIO())
    assert (tmp_path / "out").exists()
    with pytest.raises(CommandError, match=message):
        call_command(*argv, "--param", bad_param, stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="unknown method 'nope'"):
        call_command(*_commands(f)[command], "--method", "nope", stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db
def test_evaluate_takes_repeated_params_and_ks(tmp_path):
    with pytest.raises(CommandError, match="--param expects KEY=VALUE"):
        call_command("evaluate", "--benchmark", "x", "--method", "bm25-lemma", "--param", "k1")
    with pytest.raises(CommandError, match="--ks expects"):
        call_command("evaluate", "--benchmark", "x", "--method", "bm25-lemma", "--ks", "0")
