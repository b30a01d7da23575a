"""The suite job carries each method as its configurations (issue 27): configured once when queued, read back in
the worker with each digest checked; a row queued before (method strings) is converted once by the data migration
and runs, or is failed by it with a sentence saying it is of the old shape; an edited configuration is refused
before any work."""
import pytest

from benchmarks.services import RunError
from benchmarks.services.suite_jobs import SUITE_KIND, carried_methods, suite_job_create
from benchmarks.suite import suite as S
from detection.methods import registry
from jobs.models import Job
from jobs.runner import run_job
from tests.conftest import run_data_migration

pytestmark = pytest.mark.django_db


def test_the_job_carries_configurations_not_strings(users):
    job = suite_job_create(methods="bm25-lemma, rrf:bm25-lemma+tfidf-surface, channels>feature-ltr(C=0.5,anchor=true)@lobo",
                           benchmarks=["loci-similes", "lucan-vergil"], owner=users["researcher"])
    plain, fused, reranked = job.params["methods"]
    assert plain == {"display": "bm25-lemma", "mode": "retriever", "reranker": None, "lobo": False,
                     "first": [registry.configure("bm25-lemma", {}, kind="retriever").to_json()]}
    assert fused["mode"] == "rrf" and [c["name"] for c in fused["first"]] == ["bm25-lemma", "tfidf-surface"]
    # the reranker's text parameters were validated once, at enqueue: typed, defaults filled, digest kept
    want = registry.configure("feature-ltr", {"C": "0.5", "anchor": "true"}, kind="reranker")
    assert reranked["reranker"] == want.to_json() and reranked["reranker"]["params"]["C"] == 0.5
    assert reranked["reranker"]["params"]["anchor"] is True and reranked["lobo"] is True
    assert reranked["display"] == "channels>feature-ltr(C=0.5,anchor=true)@lobo"  # the row's name, as typed
    back = carried_methods(job.params["methods"])
    assert [m.display for m in back] == [m["display"] for m in job.params["methods"]]
    assert back[2].reranker == want and back[2].first == "channels"


def test_the_same_bad_value_gets_the_registrys_message_at_enqueue(users):
    with pytest.raises(RunError) as caught:
        suite_job_create(methods="bm25-lemma>feature-ltr(C=0)", benchmarks=["loci-similes"], owner=users["researcher"])
    with pytest.raises(registry.ParamError) as direct:
        registry.configure("feature-ltr", {"C": "0"}, kind="reranker")
    assert str(caught.value) == f"methods: method 'bm25-lemma>feature-ltr(C=0)': {direct.value}"
    with pytest.raises(RunError, match="a reranker's first stage is one retriever, not a fusion"):
        suite_job_create(methods="rrf:bm25-lemma+tesserae>feature-ltr", benchmarks=["loci-similes"],
                         owner=users["researcher"])
    assert not Job.objects.filter(kind=SUITE_KIND).exists()


def test_an_old_shaped_row_runs_and_gives_the_new_rows_figures(users):
    methods = ["bm25-lemma", "rrf:bm25-lemma+tfidf-surface"]
    new = suite_job_create(methods=", ".join(methods), benchmarks=["loci-similes"], owner=users["researcher"])
    # a suite job exactly as suite_job_create stored it before jobs carried configurations: the method strings
    old = Job.objects.create(kind=SUITE_KIND, owner=users["researcher"],
                             params={"methods": list(methods), "benchmarks": ["loci-similes"]})
    run_data_migration("benchmarks", "0007_mcfg_config_only", "convert_suite_jobs")
    old.refresh_from_db()
    assert old.params["methods"] == new.params["methods"]
    assert run_job(new.pk) == "succeeded", Job.objects.get(pk=new.pk).error
    assert run_job(old.pk) == "succeeded", Job.objects.get(pk=old.pk).error
    new.refresh_from_db()
    old.refresh_from_db()
    assert new.result["methods"] == old.result["methods"] == methods
    assert new.result["rows"] == old.result["rows"] and new.result["table"] == old.result["table"]
    assert abs(new.result["rows"]["loci-similes"]["bm25-lemma"]["mean"]["RR@10"] - 0.8751) < 5e-4


def test_old_rows_that_no_longer_configure_and_edited_ones_fail_before_any_work(users):
    def failed(methods):
        job = Job.objects.create(kind=SUITE_KIND, owner=users["researcher"],
                                 params={"methods": methods, "benchmarks": ["loci-similes"]})
        run_data_migration("benchmarks", "0007_mcfg_config_only", "convert_suite_jobs")
        job.refresh_from_db()
        if job.status != "failed":  # not of the old shape: refused by the worker
            assert run_job(job.pk) == "failed"
            job.refresh_from_db()
        assert job.progress < 0.02  # refused before the first benchmark was loaded
        return job.error

    error = failed(["bm25-lemma>feature-ltr(C=0)"])
    assert "queued before jobs carried their methods' configurations" in error and "feature-ltr(C=0)" in error
    assert "queue it again" in error
    assert "unknown method 'bm25-nope'" in failed(["bm25-nope"])
    assert "never reads another tool's file" in failed(["file:trec:/etc/passwd"])

    carried = S.configure_method("bm25-lemma>feature-logreg(C=0.5)").to_json()
    edited = {**carried, "reranker": {**carried["reranker"], "params": {**carried["reranker"]["params"], "C": 9.0}}}
    assert "the configuration of 'feature-logreg' does not match its digest" in failed([edited])
    renamed = {**carried, "display": "bm25-lemma>feature-ltr(C=0.5)"}
    assert "does not name the configurations it carries" in failed([renamed])
    swapped = {**carried, "first": [carried["reranker"]]}
    assert "configuration of a reranker ('feature-logreg') where a retriever belongs" in failed([swapped])
    assert "must be a JSON object" in failed([{"display": "bm25-lemma", "mode": "file", "first": [],
                                                "reranker": None, "lobo": False}])
    with pytest.raises(RunError, match="carries no method"):
        carried_methods([])
