"""The pages' one form-action shape (core/page_actions.py), through the real views that use it: a refused form is
shown again with the service's reason and nothing half-made stays; a valid one queues a job and says so, or says
why the job was not started (a refused broker); a refused button says why and goes back; a refusal the view does
not handle reaches the error page with its status."""
import socket
from pathlib import Path

import pytest
from django.contrib.messages import get_messages

from benchmarks.models import EvaluationRun
from jobs.models import Job
from tests.celery_broker import broker_at
from workbench.models import DetectionRun, Document

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "locisimiles" / "package_examples"
DETECT = {"retriever": "bm25-lemma", "retriever_params": "{}", "reranker": "", "reranker_params": "{}",
          "top_k": "3", "unit": "line", "threshold_cit": "0.5", "threshold_cf": "0.5", "name": ""}


def _said(response) -> list[str]:
    """The messages waiting for the next page (each test's client reads none, so they add up)."""
    return [str(m) for m in get_messages(response.wsgi_request)]


def _uploads() -> dict:
    return {"query_file": (EXAMPLES / "hieronymus_samples.csv").open("rb"),
            "source_file": (EXAMPLES / "vergil_samples.csv").open("rb")}


@pytest.fixture
def loci_version(db):
    from benchmarks.services import benchmark_import_545

    folder = EXAMPLES.parent
    version, _ = benchmark_import_545(with_text_path=folder / "pairs_545_with_text.csv",
                                      ref_type_path=folder / "pairs_545_ref_type.csv", name="loci-similes-545")
    return version


@pytest.fixture
def researcher(client, users):
    client.force_login(users["researcher"])
    return client


@pytest.mark.django_db
def test_a_refused_form_is_shown_again_with_the_reason_and_nothing_stays(researcher, loci_version):
    page = researcher.post(f"/benchmarks/versions/{loci_version.pk}/", {
        "method": "bm25-lemma", "params": '{"no_such_param": 1}', "reranker": "", "pool": "gold", "ks": "1, 10",
        "split": "file", "n_folds": "5", "seed": "0"})
    assert page.status_code == 200 and "no_such_param" in page.content.decode()
    assert 'class="errorlist nonfield"' in page.content.decode() and not EvaluationRun.objects.exists()

    page = researcher.post("/workbench/", {**DETECT, "retriever_params": '{"no_such_param": 1}', **_uploads()})
    assert page.status_code == 200 and "no_such_param" in page.content.decode()
    assert not DetectionRun.objects.exists() and not Document.objects.exists()  # the uploads went with the refusal

    page = researcher.post("/benchmarks/suite/", {"methods": "no-such-method", "benchmarks": ["loci-similes"]})
    assert page.status_code == 200 and "no-such-method" in page.content.decode()
    assert not Job.objects.filter(kind="benchmarks.suite").exists()


@pytest.mark.django_db
def test_a_valid_form_queues_the_job_and_says_so(researcher, loci_version):
    answer = researcher.post(f"/benchmarks/versions/{loci_version.pk}/", {
        "method": "bm25-lemma", "params": "{}", "reranker": "", "pool": "gold", "ks": "1, 10", "split": "file",
        "n_folds": "5", "seed": "0"})
    run = EvaluationRun.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/benchmarks/runs/{run.pk}/"
    assert _said(answer) == [f"Run {run.pk} queued (job {run.job_id})."]

    answer = researcher.post("/workbench/", {**DETECT, **_uploads()})
    detection = DetectionRun.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/workbench/runs/{detection.pk}/"
    assert _said(answer)[1:] == [f"Detection {detection.pk} queued (job {detection.job_id})."]

    answer = researcher.post("/benchmarks/suite/", {"methods": "bm25-lemma", "benchmarks": ["loci-similes"]})
    job = Job.objects.get(kind="benchmarks.suite")
    assert answer.status_code == 302 and _said(answer)[2:] == [f"Suite job {job.pk} queued."]


@pytest.fixture
def refused_broker():
    """The broker's address is a port nobody listens on: sending a job fails at once."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    with broker_at(f"redis://127.0.0.1:{port}/0"):
        yield


@pytest.mark.django_db(transaction=True)
def test_a_job_that_cannot_be_sent_is_said_not_started(refused_broker, client, make_user):
    client.force_login(make_user("res-broker", "researcher"))
    answer = client.post("/workbench/", {**DETECT, **_uploads()})
    detection = DetectionRun.objects.get()
    assert answer.status_code == 302 and answer["Location"] == f"/workbench/runs/{detection.pk}/"
    said = _said(answer)
    assert len(said) == 1 and said[0].startswith(f"Detection {detection.pk} was not started: Could not send the job")
    assert Job.objects.get(pk=detection.job_id).status == "failed"


@pytest.mark.django_db
def test_a_refused_button_says_why_and_goes_back(researcher, users, loci_version):
    from jobs.runner import run_job
    from workbench.services import detection_run_create, document_upload

    me = users["researcher"]
    run = detection_run_create(
        query_document=document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=me),
        source_document=document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=me),
        retriever="bm25-lemma", top_k=2, owner=me)
    assert run_job(run.job_id) == "succeeded"
    versions_before = loci_version.benchmark.versions.count()
    answer = researcher.post(f"/workbench/runs/{run.pk}/promote/", {"base_version": loci_version.pk, "version": "2"})
    assert answer.status_code == 302 and answer["Location"] == f"/workbench/runs/{run.pk}/"
    assert _said(answer) == ["this run does not compare the benchmark version's own query and source corpora; "
                             "only such runs can grow its gold"]
    assert loci_version.benchmark.versions.count() == versions_before
    answer = researcher.get(f"/workbench/runs/{run.pk}/export/?what=results&as=xlsx")
    assert answer.status_code == 302 and answer["Location"] == f"/workbench/runs/{run.pk}/"
    said = _said(answer)[1:]
    assert len(said) == 1 and said[0].startswith("Export refused: ") and "as" in said[0]
    download = researcher.get(f"/workbench/runs/{run.pk}/export/?what=results&as=csv")
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")


@pytest.mark.django_db
def test_a_refusal_no_view_handles_is_its_status_page(client, users, loci_version):
    """Approving a version is a lead's: a researcher's POST reaches the error page, 403 with the reason."""
    from benchmarks.models import BenchmarkVersion

    pending = BenchmarkVersion.objects.create(benchmark=loci_version.benchmark, version="2-pending",
                                              query_corpus=loci_version.query_corpus,
                                              source_corpus=loci_version.source_corpus, awaiting_approval=True,
                                              proposed_by=users["researcher"])
    client.force_login(users["researcher"])
    refused = client.post(f"/benchmarks/versions/{pending.pk}/approve/")
    assert refused.status_code == 403 and "lead" in refused.content.decode()
    pending.refresh_from_db()
    assert pending.awaiting_approval
    client.force_login(users["lead"])
    approved = client.post(f"/benchmarks/versions/{pending.pk}/approve/")
    assert approved.status_code == 302 and _said(approved) == [f"{pending} is approved: every user now sees it."]
    pending.refresh_from_db()
    assert not pending.awaiting_approval


def test_a_button_action_goes_back_or_shows_the_page_again_never_both(rf):
    """`page_action` takes one answer to a refusal: a redirect to `back` with the message, or `again(refusal)`."""
    from django.http import HttpResponse

    from core.errors import DomainError
    from core.page_actions import page_action

    class Conflict(DomainError):
        status = 409

    def refuse():
        raise Conflict("already taken")

    request = rf.post("/")
    again = page_action(request, refuse, again=lambda exc: HttpResponse(f"shown again: {exc}", status=exc.status))
    assert again.status_code == 409 and again.content.decode() == "shown again: already taken"
    for neither_or_both in ({}, {"back": "/", "again": lambda exc: HttpResponse()}):
        with pytest.raises(TypeError, match="one of back"):
            page_action(request, refuse, **neither_or_both)
