"""Every method runs with its default parameters on a fresh install: a default word-vector model that is not
here (``la-lemma-cbow200``) gives way to the largest installed one (the Latin Library vectors shipped in
data/vectors/) with a note on the run; a model the user names that is not here is refused naming the ones that
are; the launch form and the API list the models here."""
import pytest

from detection.methods.infrastructure import model_store
from jobs.runner import run_job
from workbench.models import DetectionRun

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_models(settings, tmp_path):
    """A models directory as `make run` leaves it: the demo's vectors only."""
    from detection.demo import load_demo_vectors

    settings.MODELS_DIR = tmp_path / "models"
    with model_store.using(settings.MODELS_DIR):
        load_demo_vectors()
        yield settings.MODELS_DIR


@pytest.fixture
def documents(users):
    from workbench.services import document_upload

    owner = users["researcher"]
    return [document_upload(name=n, data=(EXAMPLES / n).read_bytes(), owner=owner)
            for n in ("hieronymus_samples.csv", "vergil_samples.csv")]


@pytest.mark.parametrize("method", ["hybrid", "static-dense"])
def test_semantic_defaults_run_on_the_shipped_vectors_with_a_note(client_for, demo_models, documents, method):
    client = client_for("researcher")
    q, s = documents
    created = client.post("/api/v1/workbench/runs/", {"query_document": q.pk, "source_document": s.pk,
                                                      "retriever": method, "top_k": 3}, format="json")
    assert created.status_code == 201, created.content
    run = DetectionRun.objects.get(pk=created.json()["id"])
    assert run.retriever_config_params["model"] == "la-lemma-cbow100"
    assert run.notes == created.json()["notes"] == [
        f"{method}: its default word vectors 'la-lemma-cbow200' are not in this installation, so this run uses "
        "'la-lemma-cbow100' (38,992 words); train the full model with `manage.py train_embeddings --name "
        "la-lemma-cbow200 ...` for better results"]
    assert run_job(run.job_id) == "succeeded", run.job.error
    run.refresh_from_db()
    assert run.summary["n_candidates"] == run.candidates.count() > 11 and run.candidates.filter(score__gt=0).exists()
    client.force_login(run.owner)
    html = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    assert "uses &#x27;la-lemma-cbow100&#x27;" in html and 'id="run-notes"' in html


def test_a_named_model_that_is_not_here_is_refused_naming_those_that_are(client_for, demo_models, documents):
    client = client_for("researcher")
    q, s = documents
    bad = client.post("/api/v1/workbench/runs/", {"query_document": q.pk, "source_document": s.pk,
                                                  "retriever": "hybrid", "retriever_params": {"model": "la-lemma-cbow200"}},
                      format="json")
    assert bad.status_code == 400
    assert "hybrid: the model 'la-lemma-cbow200' (parameter 'model') is not in this installation's models directory; " \
           "the models here: la-lemma-cbow100, la-lemma-demo" in bad.json()["detail"]
    assert not DetectionRun.objects.exists()
    listed = client.get("/api/v1/workbench/methods/").json()["models"]
    assert [(m["name"], m["kind"], m["language"], m["shipped"]) for m in listed] == [
        ("grc-lemma-demo", "word vectors", "grc", False), ("la-lemma-cbow100", "word vectors", "la", True),
        ("la-lemma-demo", "word vectors", "la", False)]


def test_without_any_vectors_the_refusal_says_how_to_get_them(client_for, settings, tmp_path, documents,
                                                               monkeypatch):
    settings.MODELS_DIR = tmp_path / "empty"
    monkeypatch.setattr(model_store, "SHIPPED_DIR", tmp_path / "nothing-shipped")  # an installation without data/
    with model_store.using(settings.MODELS_DIR):
        q, s = documents
        bad = client_for("researcher").post("/api/v1/workbench/runs/", {
            "query_document": q.pk, "source_document": s.pk, "retriever": "static-dense"}, format="json")
    assert bad.status_code == 400 and "the models here: none" in bad.json()["detail"]
    assert "`manage.py load_demo` trains small demo vectors" in bad.json()["detail"]


def test_a_failed_run_reads_as_a_sentence_on_its_page(client, users, demo_models, documents):
    """A model folder that is not word vectors fails the job; the run page says why in a sentence (no
    traceback, no server path)."""
    from workbench.services import detection_run_create

    (demo_models / "la-broken").mkdir()
    q, s = documents
    run = detection_run_create(query_document=q, source_document=s, retriever="static-dense",
                               retriever_params={"model": "la-broken"}, owner=users["researcher"])
    assert run_job(run.job_id) == "failed"
    run.refresh_from_db()
    assert "Traceback" in run.job.error_detail and "Traceback" not in run.job.error
    client.force_login(users["researcher"])
    html = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    assert ('<p class="error-text">Model &#x27;la-broken&#x27; has no manifest.json: it is not a word-vector model.</p>'
            in html)
    assert "Traceback" not in html and str(demo_models) not in html


def test_the_detect_command_runs_the_hybrid_default_with_a_note(demo_models, tmp_path):
    import csv
    import io

    from django.core.management import CommandError, call_command

    out, err = io.StringIO(), io.StringIO()
    call_command("detect", "--query", str(EXAMPLES / "hieronymus_samples.csv"), "--source",
                 str(EXAMPLES / "vergil_samples.csv"), "--output", str(tmp_path / "out.csv"), "--method", "hybrid",
                 "--top-k", "2", stdout=out, stderr=err)
    assert "its default word vectors 'la-lemma-cbow200' are not in this installation, so this run uses " \
           "'la-lemma-cbow100'" in err.getvalue() + out.getvalue()
    rows = list(csv.DictReader(open(tmp_path / "out.csv", encoding="utf-8")))
    assert rows and rows[0]["query_id"] == "hier. adv. iovin. 1.1"
    with pytest.raises(CommandError, match="the models here: la-lemma-cbow100, la-lemma-demo$"):
        call_command("detect", "--query", str(EXAMPLES / "hieronymus_samples.csv"), "--source",
                     str(EXAMPLES / "vergil_samples.csv"), "--output", str(tmp_path / "x.csv"), "--method",
                     "static-dense", "--param", "model=la-lemma-cbow200")
