"""Sharded jobs in one process (the runner called directly; the two-worker test is test_sharding_workers):
fan-out, summed progress, the join in the database, a lost shard sent again without redoing the others,
failure and cancellation, and a merged detection identical to the unsharded search."""
import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.utils import timezone

from benchmarks.models import Corpus, Segment
from core.paths import shared_data_dir
from detection.latin.readers import read_tess
from detection.latin.segment import segment_units
from detection.methods import ParamError, UnknownMethod, get_retriever
from detection.services.detection import DetectionError, detection_job_create
from jobs.models import Job
from jobs.runner import run_job
from jobs.services import job_cancel, job_reap_stale

TESS = shared_data_dir() / "latin_texts" / "tesserae"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    """Each test starts like a fresh worker process: no index loaded yet."""
    from detection import detection_jobs as jobs

    jobs._LOADED.clear()


@pytest.fixture
def not_eager():
    """Messages go to the (unconsumed) broker instead of running inline, as in a deployment."""
    from config.celery import app

    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = True


def make_corpora(n_queries: int = 90):
    """Jerome's letters (queries) against Virgil's Eclogues and Georgics (sources), stored as corpora."""
    if not TESS.exists():
        pytest.skip("shared data not available")
    src = []
    for stem, prefix in [("vergil.eclogues", "verg. ecl."), ("vergil.georgics", "verg. georg.")]:
        src += segment_units(read_tess(TESS / f"{stem}.tess"), prefix, verse=True)
    qry = segment_units(read_tess(TESS / "jerome.epistulae.tess"), "hier. epist.", verse=False)[:n_queries]
    corpora = []
    for name, side, segs in [("sharding queries", "query", qry), ("sharding sources", "source", src)]:
        corpus = Corpus.objects.create(name=name, side=side)
        Segment.objects.bulk_create(Segment(corpus=corpus, seg_id=s.seg_id, text=s.text) for s in segs)
        corpora.append((corpus, [s.seg_id for s in segs], [s.text for s in segs]))
    return corpora


def unsharded(corpora, method="tesserae", k=10):
    (_, _, q_texts), (_, s_ids, s_texts) = corpora
    return get_retriever(method).fit(s_ids, s_texts).search(q_texts, k)


def merged(job: Job):
    data = np.load(Path(settings.VAR_DIR) / job.result["file"])
    return data["indices"], data["scores"]


def shards_of(job):
    return list(Job.objects.filter(parent=job).order_by("shard_index"))


def test_detection_fans_out_sums_progress_and_merges_identically():
    corpora = make_corpora()
    (qc, q_ids, _), (sc, s_ids, _) = corpora
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="tesserae", k=10, shard_size=25)
    assert run_job(job.pk) == "running"
    shards = shards_of(job)
    assert [(s.params["start"], s.params["stop"]) for s in shards] == [(0, 25), (25, 50), (50, 75), (75, 90)]
    assert all(s.kind == "benchmarks.detect.shard" and s.status == "queued" for s in shards)
    # a detection is the interactive lane's (jobs.registry.INTERACTIVE_KINDS) until it fans out: its shards are bulk
    assert job.queue == "interactive" and {s.queue for s in shards} == {"cpu"}
    run_job(shards[2].pk)
    run_job(shards[0].pk)
    job.refresh_from_db()
    assert job.status == "running" and job.progress == pytest.approx(0.5)  # 2 of 4 shards, summed
    assert job.progress_message == "2 of 4 shards done"
    for s in shards[1], shards[3]:
        run_job(s.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert job.progress == 1.0 and job.result["shards"] == 4 and job.result["queries"] == 90
    assert job.result["index_loads"] == 1  # one process ran the 4 shards: the index was built once
    expect = unsharded(corpora)
    idx, val = merged(job)
    np.testing.assert_array_equal(idx, expect.indices)
    np.testing.assert_array_equal(val, expect.scores)
    data = np.load(Path(settings.VAR_DIR) / job.result["file"])
    assert list(data["query_ids"]) == q_ids and list(data["source_ids"]) == s_ids


def test_a_lost_shard_is_sent_again_and_the_others_are_not_redone(settings, not_eager):
    corpora = make_corpora(40)
    (qc, _, _), (sc, _, _) = corpora
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=5, shard_size=20)
    run_job(job.pk)
    first, second = shards_of(job)
    run_job(first.pk)
    done_at = Job.objects.get(pk=first.pk).finished
    # the second shard's worker dies mid-run: the row says running, the heartbeat stops
    old = timezone.now() - dt.timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT * 3)
    Job.objects.filter(pk=second.pk).update(status="running", started=old, heartbeat=old, worker="w-dead@h",
                                            deliveries=1)
    Job.objects.filter(pk=job.pk).update(heartbeat=old)  # the parent's heartbeat went with it
    assert job_reap_stale() == 1
    second.refresh_from_db()
    assert second.status == "queued" and second.deliveries == 2 and "worker w-dead@h" in second.log
    assert Job.objects.get(pk=job.pk).status == "running"  # not reaped: a shard is queued
    run_job(second.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert Job.objects.get(pk=first.pk).finished == done_at  # the first shard was not run again
    expect = unsharded(corpora, "bm25-lemma", 5)
    np.testing.assert_array_equal(merged(job)[0], expect.indices)


def test_a_shard_lost_too_often_fails_the_parent_and_cancels_the_rest(settings):
    (qc, _, _), (sc, _, _) = make_corpora(30)
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=5, shard_size=10)
    run_job(job.pk)
    first, second, _third = shards_of(job)
    old = timezone.now() - dt.timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT * 3)
    Job.objects.filter(pk=first.pk).update(status="running", heartbeat=old, deliveries=settings.JOB_SHARD_ATTEMPTS)
    job_reap_stale()
    job.refresh_from_db()
    assert job.status == "failed" and f"Shard 0 (job {first.pk}) failed: Worker lost" in job.error
    assert {s.status for s in shards_of(job)} == {"failed", "cancelled"}
    assert run_job(second.pk) == "cancelled"  # a cancelled shard is never claimed


def test_a_failing_shard_fails_the_parent():
    (qc, _, _), (sc, _, _) = make_corpora(20)
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=5, shard_size=10)
    run_job(job.pk)
    first, second = shards_of(job)
    broken = {**first.params["method"], "name": "no-such-method"}  # the job carries a MethodConfig's JSON
    Job.objects.filter(pk=first.pk).update(params={**first.params, "method": broken})
    run_job(first.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "Shard 0" in job.error and "no-such-method" in job.error
    assert Job.objects.get(pk=second.pk).status == "cancelled"


def test_cancelling_the_parent_cancels_its_shards():
    (qc, _, _), (sc, _, _) = make_corpora(20)
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=5, shard_size=10)
    run_job(job.pk)
    job_cancel(job=Job.objects.get(pk=job.pk))
    assert {s.status for s in shards_of(job)} == {"cancelled"}


def test_detection_requests_are_validated():
    (qc, _, _), (sc, _, _) = make_corpora(5)
    with pytest.raises(ParamError, match="unknown parameter"):  # the registry's own error (issue 27)
        detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", params={"path": "/etc"})
    with pytest.raises(DetectionError, match="k must be"):
        detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", k=0)
    with pytest.raises(DetectionError, match="shard_size"):
        detection_job_create(query_corpus=qc, source_corpus=sc, method="bm25-lemma", shard_size=0)
    with pytest.raises(UnknownMethod, match="unknown method 'no-such-method'"):
        detection_job_create(query_corpus=qc, source_corpus=sc, method="no-such-method")
