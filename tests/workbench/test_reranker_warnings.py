"""A workbench detection whose reranker labels nothing says so in its job's log and result."""
import pytest

from jobs.models import Job
from jobs.runner import run_job

pytestmark = pytest.mark.django_db


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
