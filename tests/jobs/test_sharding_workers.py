"""One detection job over two real Celery worker processes (the configured broker: Redis in CI, the
filesystem broker locally): the shards spread over both, the plan fits the index once and the other worker
loads it from the index cache, the merged
result equals the unsharded search, and a shard whose worker is SIGKILLed is run again by the other worker
while the shards already done are kept."""
import signal
import time

import numpy as np
import pytest

from detection.services.detection import detection_job_create
from jobs.models import Job
from tests.jobs.test_sharding import make_corpora, merged, shards_of, unsharded
from tests.jobs.test_worker_integration import _wait_for, broker_delivery, start_worker  # noqa: F401

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_two_workers_share_the_shards_and_merge_identically(start_worker):  # noqa: F811
    corpora = make_corpora(120)
    (qc, _, _), (sc, _, _) = corpora
    # each shard held 1.5 s (test-only pause, longer than the filesystem broker's 1 s poll): the worker that
    # planned, holding the index, cannot take all eight before the other polls
    start_worker("w-a", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    start_worker("w-b", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="tesserae", k=10, shard_size=15)
    done = _wait_for(job.pk, {"succeeded", "failed"}, timeout=240)
    assert done.status == "succeeded", done.error
    shards = shards_of(done)
    assert len(shards) == 8 and all(s.status == "succeeded" and s.deliveries == 1 for s in shards)
    workers = {s.worker.split("@")[0] for s in shards}
    assert workers == {"w-a", "w-b"}, workers  # both workers took shards
    per_process = done.result["shards_per_worker"]
    assert len(per_process) == 2 and sum(per_process.values()) == 8
    assert done.result["index_loads"] == 2  # once per worker process, not once per shard
    # fitted once, by the plan; the other worker loaded it from the shared index cache instead of fitting
    assert done.result["index_builds"] == 1 and done.result["index_cache_loads"] == 1
    assert done.progress == 1.0
    expect = unsharded(corpora)
    idx, val = merged(done)
    np.testing.assert_array_equal(idx, expect.indices)
    np.testing.assert_array_equal(val, expect.scores)


def test_a_shard_of_a_killed_worker_runs_again_on_the_other(start_worker):  # noqa: F811
    corpora = make_corpora(60)
    (qc, _, _), (sc, _, _) = corpora
    doomed = start_worker("w-doomed", SIMILIA_TEST_PAUSE_IN_SHARD="300")
    # the healthy worker holds each shard 1.5 s, longer than the filesystem broker's 1 s poll: whichever worker
    # ran the plan, the doomed one takes a shard (unpaused, a healthy worker that planned took all six once)
    start_worker("w-healthy", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    job = detection_job_create(query_corpus=qc, source_corpus=sc, method="tesserae", k=10, shard_size=10)
    deadline = time.monotonic() + 180
    while True:  # the doomed worker holds one shard (paused, heartbeat on); the healthy one does the rest
        shards = shards_of(job)
        held = [s for s in shards if s.worker.startswith("w-doomed@") and s.status == "running"]
        others_done = sum(s.status == "succeeded" for s in shards) == len(shards) - 1
        if held and others_done:
            break
        assert time.monotonic() < deadline, [(s.shard_index, s.status, s.worker) for s in shards]
        time.sleep(0.3)
    lost = held[0]
    kept = {s.pk: s.finished for s in shards if s.pk != lost.pk}
    doomed.kill(signal.SIGKILL)
    done = _wait_for(job.pk, {"succeeded", "failed"}, timeout=120)
    assert done.status == "succeeded", done.error
    lost.refresh_from_db()
    assert lost.status == "succeeded" and lost.worker.startswith("w-healthy@") and lost.deliveries == 2
    assert "Worker lost" in lost.log and "Sent again" in lost.log
    for pk, finished in kept.items():  # the shards done before the kill were not run again
        shard = Job.objects.get(pk=pk)
        assert shard.finished == finished and shard.deliveries == 1
    expect = unsharded(corpora)
    idx, val = merged(done)
    np.testing.assert_array_equal(idx, expect.indices)
    np.testing.assert_array_equal(val, expect.scores)
