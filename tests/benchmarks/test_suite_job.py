"""The benchmark suite as a job and a page: validation (no file paths from a page), a real run in-process, and its
table on the page."""
import pytest

from benchmarks.services import RunError
from benchmarks.services.suite_jobs import SUITE_KIND, suite_job_create
from jobs.models import Job
from jobs.runner import run_job

pytestmark = pytest.mark.django_db


def test_bad_suite_requests_are_refused_before_any_job(users):
    for methods, benchmarks, message in (
            ("", ["loci-similes"], "at least one method"),
            ("bm25-lemma>tesserae", ["loci-similes"], "methods: method 'bm25-lemma>tesserae'"),
            ("file:trec:/etc/passwd", ["loci-similes"], "from the command line"),
            ("bm25-lemma", ["nope"], "'nope' is not one"),
            ("bm25-lemma", [], "benchmarks: choose from")):
        with pytest.raises(RunError, match=message):
            suite_job_create(methods=methods, benchmarks=benchmarks, owner=users["researcher"])
    assert not Job.objects.filter(kind=SUITE_KIND).exists()


def test_suite_job_runs_and_its_table_is_on_the_page(users, client):
    job = suite_job_create(methods="bm25-lemma, rrf:bm25-lemma+tfidf-surface", benchmarks=["loci-similes"],
                           owner=users["researcher"])
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    rows = job.result["rows"]["loci-similes"]
    assert abs(rows["bm25-lemma"]["mean"]["RR@10"] - 0.8751) < 5e-4  # perf/expected/suite_short.yaml
    assert 0 < rows["rrf:bm25-lemma+tfidf-surface"]["vs_first"]["RR@10"]["p_randomization"] <= 1
    client.force_login(users["researcher"])
    html = client.get("/benchmarks/suite/").content.decode()
    assert f'id="suite-{job.pk}"' in html and "rrf:bm25-lemma+tfidf-surface" in html and "0.875" in html
    response = client.post("/benchmarks/suite/", {"methods": "bm25-lemma>bm25-lemma", "benchmarks": ["loci-similes"]})
    assert response.status_code == 200 and "methods: method" in response.content.decode()
    assert Job.objects.filter(kind=SUITE_KIND).count() == 1
