"""The detection job reads the configurations it carries with their digests checked; a job row stored in the old
shape (the retriever's and the reranker's names with their parameters) is converted once by the data migration and
then finds what a new one finds, or is failed by it with a sentence saying it is of the old shape."""
import pytest

from benchmarks.models import Corpus, Segment
from detection import detection_jobs
from detection.detection_jobs import DETECT_KIND, segment_set
from detection.services.detection import detection_job_create, detection_method_config
from jobs.models import Job
from jobs.runner import run_job
from tests.conftest import run_data_migration

pytestmark = pytest.mark.django_db
CAPTURED: dict = {}

QUERIES = ["arma virumque cano troiae qui primus ab oris", "tantae molis erat romanam condere gentem",
           "quidve dolens regina deum tot volvere casus"]
SOURCES = ["arma virumque cano", "tantae molis erat condere gentem", "regina deum volvere casus insignem",
           "litora multum ille et terris iactatus", "musa mihi causas memora"]


@detection_jobs.register_result_store("test-capture-configs")
def _capture(context, params, candidates, merged):
    CAPTURED["last"] = candidates
    return {"stored": len(candidates)}


@pytest.fixture
def corpora():
    detection_jobs._LOADED.clear()
    out = []
    for name, side, texts in (("q", "query", QUERIES), ("s", "source", SOURCES)):
        corpus = Corpus.objects.create(name=name, side=side)
        Segment.objects.bulk_create(Segment(corpus=corpus, seg_id=f"{name}{i}", text=t) for i, t in enumerate(texts))
        out.append(corpus)
    return out


def _old_row(qc, sc, **overrides) -> Job:
    """A detection job exactly as ``detection_job_create`` stored it before jobs carried configurations."""
    params = {"queries": segment_set("corpus", qc.pk), "sources": segment_set("corpus", sc.pk), "method": "bm25-lemma",
              "params": {"k1": 1.2, "b": 0.75, "stopwords": True}, "k": 2, "reranker": "lexical-rule",
              "reranker_params": {}, "thresholds": None, "min_score": None, "candidates": True,
              "store": {"name": "test-capture-configs"}, "shards": None, "shard_size": None, "unit": "line"}
    params.update(overrides)
    job = Job.objects.create(kind=DETECT_KIND, params=params)
    run_data_migration("detection", "0003_mcfg_job_configurations", "convert_old_jobs")
    job.refresh_from_db()
    return job


def _found(job) -> list:
    assert run_job(job.pk) in ("succeeded", "running")
    for shard in Job.objects.filter(parent=job).order_by("shard_index"):
        run_job(shard.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    c = CAPTURED["last"]
    return sorted(zip(c.query.tolist(), c.source.tolist(), list(c.label)))


def test_an_old_shaped_detection_row_finds_what_a_new_one_finds(corpora):
    qc, sc = corpora
    converted = _old_row(qc, sc)
    assert converted.params["method"] == detection_method_config("bm25-lemma", {"k1": 1.2}, kind="retriever").to_json()
    assert "params" not in converted.params and "reranker_params" not in converted.params
    old = _found(converted)
    detection_jobs._LOADED.clear()
    new_job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", params={"k1": 1.2}, k=2,
                                   reranker="lexical-rule", candidates=True, store={"name": "test-capture-configs"})
    assert new_job.params["method"]["name"] == "bm25-lemma" and "params" not in new_job.params
    new = _found(new_job)
    assert old == new  # the same pairs, the same reranker labels
    assert {(q, s) for q, s, _ in new} == {(0, 0), (1, 1), (2, 2)}  # each query finds the line it quotes


def test_an_old_shaped_detection_row_whose_values_no_longer_pass_fails_saying_so(corpora):
    qc, sc = corpora
    job = _old_row(qc, sc, params={"k1": 1.2, "cache_dir": "/tmp"})
    assert job.status == "failed" and job.finished is not None
    assert "queued before jobs carried their methods' configurations" in job.error and "'bm25-lemma'" in job.error
    assert "unknown parameter 'cache_dir'" in job.error and "queue it again" in job.error
    job = _old_row(qc, sc, reranker="no-such-reranker")
    assert job.status == "failed" and "unknown method 'no-such-reranker'" in job.error


def test_a_detection_job_whose_configuration_was_edited_is_refused(corpora):
    qc, sc = corpora
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=2)
    edited = {**job.params["method"], "params": {**job.params["method"]["params"], "k1": 3.0}}
    Job.objects.filter(pk=job.pk).update(params={**job.params, "method": edited})
    assert run_job(job.pk) == "failed"
    assert "the configuration of 'bm25-lemma' does not match its digest" in Job.objects.get(pk=job.pk).error
