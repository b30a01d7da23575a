"""The train_embeddings job and command (corpus by registered name from a job; path only on the command line),
and the demo's tiny word-vector models that make the semantic methods run without ../shared."""
import pytest
from django.core.management import CommandError, call_command

from detection.methods import registry
from detection.methods.infrastructure import model_store
from detection.methods.semantic.word_vectors import load_vectors
from jobs.models import Job
from jobs.runner import run_job

LINES = ["arma uirumque cano troiae qui primus ab oris", "italiam fato profugus lauiniaque uenit litora",
         "multum ille et terris iactatus et alto", "ui superum saeuae memorem iunonis ob iram"] * 5


@pytest.fixture
def dirs(tmp_path, settings, monkeypatch):
    settings.MODELS_DIR = tmp_path / "models"
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("SIMILIA_CORPORA_DIR", str(tmp_path / "corpora"))
    corpus = tmp_path / "corpora" / "aeneid"
    corpus.mkdir(parents=True)
    (corpus / "aen1.txt").write_text("\n".join(LINES), encoding="utf-8")
    with model_store.using(settings.MODELS_DIR):
        yield tmp_path


@pytest.mark.django_db
def test_job_trains_on_a_registered_corpus_with_progress_per_epoch(dirs):
    job = Job.objects.create(kind="train_embeddings", params={
        "corpus": "aeneid", "name": "la-job", "config": {"dim": 8, "epochs": 3, "min_count": 1, "workers": 1}})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.result["model"] == "la-job" and job.result["dim"] == 8 and job.result["corpus"]["lines"] == 20
    assert "trained word2vec lemma dim 8" in job.log and job.progress == 1.0
    assert load_vectors("la-job").manifest["corpus"]["source"] == "aeneid"


@pytest.mark.django_db
@pytest.mark.parametrize("corpus, message", [("/etc", "registered corpus name"), ("missing", "no corpus named")])
def test_job_refuses_paths_and_unknown_corpora(dirs, corpus, message):
    job = Job.objects.create(kind="train_embeddings", params={"corpus": corpus, "name": "x"})
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert message in job.error


@pytest.mark.django_db
def test_command_trains_from_a_path_and_queues_jobs_by_name_only(dirs, capsys):
    call_command("train_embeddings", "--corpus", str(dirs / "corpora" / "aeneid"), "--name", "la-cmd", "--dim", "8",
                 "--epochs", "1", "--min-count", "1", "--workers", "1", "--unit", "surface")
    assert "la-cmd: " in capsys.readouterr().out and load_vectors("la-cmd").unit == "surface"
    with pytest.raises(CommandError, match="with --job, --corpus is a name"):
        call_command("train_embeddings", "--corpus", str(dirs / "corpora" / "aeneid"), "--name", "q", "--job")
    call_command("train_embeddings", "--corpus", "aeneid", "--name", "q", "--job")
    assert Job.objects.get(kind="train_embeddings").queue == "cpu"
    with pytest.raises(CommandError, match="dim must be"):
        call_command("train_embeddings", "--corpus", "x", "--name", "y", "--dim", "0")


def test_demo_models_make_hybrid_and_greek_methods_run(dirs):
    from detection.demo import load_demo_vectors

    assert "la-lemma-demo" in load_demo_vectors() and load_demo_vectors().endswith("already there")
    size = sum(p.stat().st_size for p in (dirs / "models" / "la-lemma-demo").iterdir())
    assert size < 2 * 2**20
    r = registry.build("hybrid", {"model": "la-lemma-demo", "weight": 0.3})
    top = r.fit(["a", "b", "c"], LINES[:3]).search(["arma cano troiae"], 2)
    assert top.ids(0)[0] == "a"
    g = registry.build("corpus_vectors", {"model": "grc-lemma-demo"})
    s = g.fit(["μῆνιν ἄειδε θεὰ", "δόξα θεῷ"]).pair_scores(["δόξα θεῷ"], ["δόξα θεῷ"])
    assert s[0] == pytest.approx(1.0, abs=1e-5)
    e = registry.build("semantic_edit_corpus", {"model": "grc-lemma-demo"})
    assert e.pair_scores(["δόξα θεῷ πρέπει"], ["δόξα θεῷ πρέπει"])[0] == pytest.approx(1.0)


def test_detect_command_runs_the_hybrid_by_name(dirs, tmp_path):
    import csv

    from detection.demo import load_demo_vectors

    load_demo_vectors()
    for name, rows in (("q.csv", [("q1", "arma uirumque cano troiae")]),
                       ("s.csv", [(f"s{i}", t) for i, t in enumerate(LINES[:4])])):
        with open(tmp_path / name, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([("seg_id", "text"), *rows])
    call_command("detect", "--query", str(tmp_path / "q.csv"), "--source", str(tmp_path / "s.csv"), "--output",
                 str(tmp_path / "out.csv"), "--method", "hybrid", "--param", "model=la-lemma-demo", "--top-k", "2")
    out = list(csv.DictReader(open(tmp_path / "out.csv", encoding="utf-8")))
    assert out[0]["query_id"] == "q1" and out[0]["source_id"] == "s0" and len(out) <= 2
