"""Imports (atomic, idempotent), gold sets from rows, and run creation."""
import shutil
from pathlib import Path

import pytest

from benchmarks.demo import LOCI_NAME, STS_NAME, load_demo_benchmarks
from benchmarks.models import (
    Benchmark,
    BenchmarkVersion,
    Corpus,
    EvaluationRun,
    GoldReference,
    GoldSimilarityPair,
    GoldSimilaritySet,
    Segment,
)
from benchmarks.services import (
    BenchmarkImportError,
    GoldImportError,
    RunError,
    benchmark_import_545,
    evaluation_run_create,
    gold_set_create_from_rows,
    gold_set_import_file,
    similarity_run_create,
)
from detection.methods import ParamError

from .conftest import REF_TYPE, STS_FILE, WITH_TEXT


@pytest.mark.django_db
def test_demo_load_is_idempotent_with_the_papers_counts():
    first = load_demo_benchmarks()
    second = load_demo_benchmarks()
    assert "loaded" in first and "present" in second
    version = BenchmarkVersion.objects.get(benchmark__name=LOCI_NAME)
    assert BenchmarkVersion.objects.count() == 1
    assert version.gold.count() == 545
    assert Segment.objects.filter(corpus=version.query_corpus).count() == 463
    assert Segment.objects.filter(corpus=version.source_corpus).count() == 408
    assert version.gold.filter(ref_type="cit.").count() == 483
    assert version.gold.filter(ref_type="cf.").count() == 62
    assert set(version.gold.values_list("fold", flat=True)) == {0, 1, 2, 3, 4}
    gold_set = GoldSimilaritySet.objects.get(name=STS_NAME)
    assert gold_set.pairs.count() == 296
    assert gold_set.pairs.values("reference_id").distinct().count() == 3
    assert GoldSimilaritySet.objects.count() == 1


@pytest.mark.django_db
def test_all_references_of_a_query_share_its_fold(loci_version):
    folds_per_query = {}
    for query_id, fold in loci_version.gold.values_list("query_id", "fold"):
        folds_per_query.setdefault(query_id, set()).add(fold)
    assert all(len(folds) == 1 for folds in folds_per_query.values())


@pytest.mark.django_db
def test_545_import_parses_each_file_once_with_the_loaders_result(monkeypatch):
    """The import checks and builds from the same rows: one csv.DictReader per file (two before), and what it
    stores equals what the pure loader reads."""
    import csv

    from benchmarks.loci import data as loci_data

    opened = []

    class CountingReader(csv.DictReader):
        def __init__(self, f, *args, **kwargs):
            opened.append(Path(f.name).name)
            super().__init__(f, *args, **kwargs)

    monkeypatch.setattr(csv, "DictReader", CountingReader)
    version, created = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE)
    assert created and sorted(opened) == ["pairs_545_ref_type.csv", "pairs_545_with_text.csv"]
    monkeypatch.undo()
    bench = loci_data.load_pairs_545(WITH_TEXT, REF_TYPE)
    stored = set(GoldReference.objects.filter(version=version).values_list(
        "pair_id", "query__seg_id", "source__seg_id", "ref_type", "fold"))
    fold = bench.file_folds["ref_type"]
    assert stored == {(g.pair_id, g.query_id, g.source_id, g.label, fold[g.query_id]) for g in bench.raw_links}
    texts = dict(Segment.objects.filter(corpus=version.query_corpus).values_list("seg_id", "text"))
    assert texts == {s.seg_id: s.text for s in bench.queries}
    assert version.provenance["counts"] == {"with_text_rows": 545, "ref_type_rows": 545, "pairs_without_type": 0}


def _nothing_imported():
    return not (Benchmark.objects.exists() or Corpus.objects.exists() or Segment.objects.exists()
                or GoldReference.objects.exists())


@pytest.mark.django_db
def test_broken_ref_type_file_names_the_line_and_imports_nothing(tmp_path):
    broken = tmp_path / "pairs_545_ref_type.csv"
    lines = REF_TYPE.read_text(encoding="utf-8").splitlines()
    lines[300] = lines[300].rsplit(",", 1)[0] + ",quote?"
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BenchmarkImportError) as exc:
        benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=broken)
    assert str(exc.value) == "pairs_545_ref_type.csv:301: ref_type 'quote?' is not 'cit.' or 'cf.'"
    assert _nothing_imported()


@pytest.mark.django_db
@pytest.mark.parametrize("mutate, message", [
    (lambda header, rows: (header.replace("position_query", "pos_q"), rows), ":1: missing column(s) position_query"),
    (lambda header, rows: (header, rows[:10] + [rows[3]] + rows[11:]), ":12: pair_id '3' repeats line 5"),
])
def test_broken_texts_file_names_the_problem_and_imports_nothing(tmp_path, mutate, message):
    import csv
    import io

    with open(WITH_TEXT, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = list(reader)
    new_header, new_rows = mutate(",".join(header), rows)
    out = io.StringIO()
    out.write(new_header + "\n")
    csv.writer(out, lineterminator="\n").writerows(new_rows)
    broken = tmp_path / "pairs_545_with_text.csv"
    broken.write_text(out.getvalue(), encoding="utf-8")
    shutil.copy(REF_TYPE, tmp_path / "ref.csv")
    with pytest.raises(BenchmarkImportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        benchmark_import_545(with_text_path=broken, ref_type_path=tmp_path / "ref.csv")
    assert _nothing_imported()


@pytest.mark.django_db
def test_sts_import_counts_and_bad_file(tmp_path, gold_set):
    assert gold_set.pairs.count() == 296
    assert gold_set.provenance["n_references"] == 3
    bad = tmp_path / "bad.tsv"
    lines = STS_FILE.read_text(encoding="utf-8").splitlines()
    lines[5] = "\t".join(lines[5].split("\t")[:4] + ["1.7"])
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GoldImportError, match=r"bad.tsv:6: score '1.7' is outside \[0, 1\]"):
        gold_set_import_file(path=bad, name="bad")
    assert not GoldSimilaritySet.objects.filter(name="bad").exists()
    assert GoldSimilarityPair.objects.count() == 296


def _rows():
    return [{"reference_id": "r1", "candidate_id": f"c{i}", "reference_text": "αβγ", "candidate_text": f"δε {i}",
             "score": i / 4} for i in range(5)]


@pytest.mark.django_db
def test_gold_set_from_rows(users):
    gold_set = gold_set_create_from_rows(name="batch 7", rows=_rows(), source_description="batch 7 scores",
                                         owner=users["lead"])
    assert gold_set.source == "annotation" and gold_set.owner == users["lead"]
    assert list(gold_set.pairs.values_list("candidate_id", "score")) == [(f"c{i}", i / 4) for i in range(5)]


@pytest.mark.django_db
@pytest.mark.parametrize("change, message", [
    ({"score": "high"}, "row 3: score 'high' is not a number"),
    ({"score": -0.1}, r"row 3: score -0.1 is outside \[0, 1\]"),
    ({"candidate_id": "c0"}, "row 3: pair 'r1' → 'c0' repeats row 1"),
    ({"reference_id": " "}, "row 3: empty reference_id or candidate_id"),
])
def test_gold_set_from_bad_rows_names_the_row_and_writes_nothing(change, message):
    rows = _rows()
    rows[2] = {**rows[2], **change}
    with pytest.raises(GoldImportError, match=message):
        gold_set_create_from_rows(name="bad", rows=rows)
    assert not GoldSimilaritySet.objects.exists()


@pytest.mark.django_db
def test_run_create_validates_and_queues(loci_version, gold_set, users, models_dir):
    with pytest.raises(RunError, match="unknown (retrieval )?method"):
        evaluation_run_create(version=loci_version, method="nope")
    with pytest.raises(RunError, match="needs a model"):
        similarity_run_create(gold_set=gold_set, method="sentence_transformer")
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=[10, 1], owner=users["researcher"])
    assert run.ks == [1, 10] and run.job.kind == "benchmarks.loci_evaluate" and run.job.queue == "cpu"
    assert run.job.params == {"run_id": run.pk} and run.status == "queued"
    (models_dir / "org" / "m").mkdir(parents=True)  # a local model (a hub id not here is refused: issue 40)
    sim = similarity_run_create(gold_set=gold_set, method="sentence_transformer", params={"model": "org/m"})
    assert sim.job.queue == "gpu" and sim.job.kind == "benchmarks.greek_sts_evaluate"
    assert similarity_run_create(gold_set=gold_set, method="levenshtein").job.queue == "cpu"
    assert EvaluationRun.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("method, params, message, error", [
    ("w2v-bigram", {"model_path": "/tmp/evil.kv"}, "unknown parameter 'model_path'", ParamError),
    ("bm25-lemma", {"cache_dir": "/etc"}, "unknown parameter 'cache_dir'", ParamError),
    ("bm25-lemma", {"k1": "1e999"}, "parameter 'k1': must be a finite number", ParamError),
    ("bm25-lemma", {"b": 7}, "parameter 'b': must be ≤ 1.0", ParamError),
    ("tesserae", {"stop_top": "²"}, "parameter 'stop_top': must be an integer", ParamError),
    ("levenshtein", {}, "unknown retrieval method .levenshtein.", RunError),
])
def test_run_params_are_validated_against_the_declaration(loci_version, method, params, message, error):
    """Parameter injection (issue 10 §3): undeclared keys (paths, caches) and bad values never reach a method.
    A bad value is the registry's own ParamError, not wrapped (issue 27)."""
    with pytest.raises(error, match=message):
        evaluation_run_create(version=loci_version, method=method, params=params)
    assert EvaluationRun.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("params", [{"model": "/etc/passwd"}, {"model": "../../x"}, {"cache_dir": "/tmp"},
                                    {"preprocess": {"evil": 1}}])
def test_similarity_params_refuse_paths_and_unknown_keys(gold_set, params):
    with pytest.raises(ParamError):
        similarity_run_create(gold_set=gold_set, method="sentence_transformer", params=params)


@pytest.mark.django_db
def test_load_benchmarks_command(tmp_path):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = io.StringIO()
    call_command("load_benchmarks", "--loci-dir", str(WITH_TEXT.parent), "--sts", str(STS_FILE), stdout=out)
    assert "545 gold references (imported)" in out.getvalue() and "296 pairs (imported)" in out.getvalue()
    (tmp_path / "pairs_545_with_text.csv").write_text("pair_id,position_query\n1,<a>\n", encoding="utf-8")
    with pytest.raises(CommandError, match="pairs_545_with_text.csv:1: missing column"):
        call_command("load_benchmarks", "--loci-dir", str(tmp_path), "--name", "other")
    assert Benchmark.objects.count() == 1
