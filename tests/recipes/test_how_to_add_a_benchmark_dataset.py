"""docs/ARCHITECTURE.md, "How to add a Latin benchmark dataset": three plain files and one command, no code; the
new benchmark is then evaluated like the 545-pair one (command, run, report)."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.models import BenchmarkVersion


def _files(tmp_path, gold_rows):
    (tmp_path / "q.csv").write_text("seg_id,text,author\n" + "\n".join(
        f"q{i},{t},Hieronymus" for i, t in enumerate(["arma uirumque cano", "tityre tu patulae recubans",
                                                       "quid faciat laetas segetes", "nulla in re simili"])) + "\n")
    (tmp_path / "s.csv").write_text("seg_id,text,author\n" + "\n".join(
        f"s{i},{t},Vergilius" for i, t in enumerate(["arma uirumque cano troiae qui primus", "tityre tu patulae "
                                                     "recubans sub tegmine fagi", "quid faciat laetas segetes quo "
                                                     "sidere terram", "ab oris italiam fato profugus"])) + "\n")
    (tmp_path / "g.csv").write_text("query_id,source_id,label\n" + "\n".join(gold_rows) + "\n")
    return ["--queries", str(tmp_path / "q.csv"), "--sources", str(tmp_path / "s.csv"), "--gold", str(tmp_path / "g.csv")]


@pytest.mark.django_db
def test_a_latin_dataset_needs_files_and_one_command(tmp_path):
    args = _files(tmp_path, ["q0,s0,cit.", "q1,s1,cit.", "q2,s2,cf.", "q3,s3,cf."])
    out = StringIO()
    call_command("load_benchmarks", *args, "--name", "toy-latin", stdout=out)  # step 1: import the files
    assert "4 gold references (imported)" in out.getvalue()
    version = BenchmarkVersion.objects.get(benchmark__name="toy-latin")
    assert version.query_corpus.segments.count() == 4 and version.gold.filter(ref_type="cf.").count() == 2
    call_command("load_benchmarks", *args, "--name", "toy-latin", stdout=out)  # idempotent
    assert "already present" in out.getvalue()
    # step 2: evaluate any registered retriever on it, like the 545-pair benchmark
    call_command("evaluate", "--benchmark", "toy-latin", "--method", "bm25-lemma", "--split", "grouped",
                 "--folds", "2", "--ks", "1,4", "--output", str(tmp_path / "r.json"), stdout=StringIO(),
                 stderr=StringIO())
    report = json.loads((tmp_path / "r.json").read_text())
    # three of the four queries share words with their source; "nulla in re simili" shares none
    assert report["recall@4"] == report["recall@1"] == 0.75


@pytest.mark.django_db
def test_bad_dataset_files_are_refused_with_the_file_named(tmp_path):
    args = _files(tmp_path, ["q0,s0,cit.", "q9,s0,cit."])
    with pytest.raises(CommandError, match="g.csv: gold ids not in the corpora"):
        call_command("load_benchmarks", *args, "--name", "toy-bad")
    with pytest.raises(CommandError, match="go together"):
        call_command("load_benchmarks", "--queries", str(tmp_path / "q.csv"))
    assert not BenchmarkVersion.objects.filter(benchmark__name="toy-bad").exists()
