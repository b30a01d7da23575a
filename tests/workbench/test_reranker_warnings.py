"""A workbench detection whose reranker labels nothing says so in its job's log and result."""
import pytest

from jobs.models import Job
from jobs.runner import run_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def models_dir(tmp_path):
    from detection.methods.infrastructure import model_store

    with model_store.using(tmp_path / "models") as path:
        yield path


def test_detection_job_warns_when_the_reranker_labels_no_candidate(users):
    from workbench.services import detection_run_create, document_upload

    owner = users["researcher"]
    # every pair shares a word or two, none is the same text: a TF-IDF cosine below 1, so no label at 1.0
    query = document_upload(name="q.csv", data=b"seg_id,text\nq1,arma virumque cano Troiae\nq2,urbs antiqua fuit\n",
                            owner=owner)
    source = document_upload(name="s.csv", data=b"seg_id,text\ns1,arma canebat miles fortis\n"
                             b"s2,antiqua urbs Karthago erat\ns3,Troiae muros vidi\n", owner=owner)
    run = detection_run_create(query_document=query, source_document=source, retriever="bm25-lemma", top_k=3,
                               reranker="lexical-rule", thresholds={"cit.": 1.0, "cf.": 1.0}, owner=owner)
    assert run_job(run.job_id) == "succeeded"
    job = Job.objects.get(pk=run.job_id)
    n = job.result["results"]
    assert job.result["warnings"] == [f"lexical-rule labels none of the {n} candidates as a reference"]
    assert f"warning: lexical-rule labels none of the {n} candidates" in job.log


def test_the_run_page_shows_labels_against_training_and_the_first_stage_mismatch(users, client, loci_version,
                                                                                  models_dir):
    """A feature-ltr model trained on bm25-lemma's candidates over Loci Similes, used on tfidf-surface's over a
    researcher's own two small texts: the run's page names both first stages, shows each label's share in this
    run beside its training candidates', and the warnings."""
    from django.core.management import call_command

    from workbench.services import detection_run_create, document_upload

    call_command("train_model", "--benchmark", loci_version.benchmark.name, "--name", "ltr-wb", "--k", "10",
                 "--retriever", "bm25-lemma")
    owner = users["researcher"]
    query = document_upload(name="q.csv", data=b"seg_id,text\nq1,arma virumque cano Troiae qui primus ab oris\n"
                            b"q2,urbs antiqua fuit Tyrii tenuere coloni\n", owner=owner)
    source = document_upload(name="s.csv", data=b"seg_id,text\ns1,arma virumque canebat miles fortis\n"
                             b"s2,antiqua urbs Karthago erat\ns3,Troiae muros vidi\n", owner=owner)
    run = detection_run_create(query_document=query, source_document=source, retriever="tfidf-surface", top_k=3,
                               reranker="feature-ltr", reranker_params={"model": "ltr-wb/all"}, owner=owner)
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    check = Job.objects.get(pk=run.job_id).result["reranker_check"]
    assert check["trained_first_stage"] == "bm25-lemma" and check["first_stage"] == "tfidf-surface"
    assert abs(sum(check["labels"].values()) - 1) < 1e-9 and abs(sum(check["training_labels"].values()) - 1) < 1e-9
    assert check["warnings"][0].startswith("feature-ltr learned to rerank bm25-lemma's candidates, not tfidf-surface's")
    client.force_login(owner)
    html = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    assert 'id="reranker-check"' in html and "learned from <strong>bm25-lemma</strong>" in html
    assert "this run used <strong>tfidf-surface</strong>" in html and "different" in html
    for name in ("none", "cit.", "cf."):
        share = round(check["labels"][name] * 100)
        trained = round(check["training_labels"][name] * 100)
        assert f'<tr data-label="{name}"><td>{name}</td><td class="num">{share}%</td><td class="num">{trained}%</td>' in html
    assert "learned to rerank bm25-lemma&#x27;s candidates" in html
