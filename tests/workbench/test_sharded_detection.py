"""A workbench detection runs as the one sharded detection job (`benchmarks.detect`): in 3 shards it stores
exactly the candidate rows a one-shard run stores (ranks, scores, class probabilities, labels, overlap)."""
import pytest

from jobs.models import Job
from jobs.runner import run_job
from workbench.models import Candidate

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db
COLUMNS = ("query__seg_id", "source__seg_id", "query_position", "rank", "score", "p_none", "p_cit", "p_cf", "label",
           "shared_lemmas", "bucket")


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    from benchmarks import detection_jobs

    detection_jobs._LOADED.clear()


def _run(owner, query, source, shards):
    from workbench.services import detection_run_create

    return detection_run_create(query_document=query, source_document=source, retriever="bm25-lemma", top_k=4,
                                reranker="lexical-rule", thresholds={"cit.": 0.2, "cf.": 0.2}, shards=shards,
                                owner=owner)


def test_three_shards_store_the_candidates_of_one(users):
    from workbench.services import document_upload

    owner = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=owner)

    one = _run(owner, query, source, 1)
    assert run_job(one.job_id) == "succeeded"  # a single shard runs inside the job
    assert not Job.objects.filter(parent=one.job_id).exists()

    three = _run(owner, query, source, 3)
    assert three.job.kind == "benchmarks.detect" and three.job.queue == "cpu"
    assert run_job(three.job_id) == "running"  # fanned out: 11 queries in shards of 4, 4 and 3
    shards = list(Job.objects.filter(parent=three.job_id).order_by("shard_index"))
    assert [(s.params["start"], s.params["stop"]) for s in shards] == [(0, 4), (4, 8), (8, 11)]
    for shard in reversed(shards):  # any order: the merge puts them back in query order
        assert run_job(shard.pk) == "succeeded", shard.error
    three.refresh_from_db()
    assert three.job.status == "succeeded", three.job.error
    assert three.job.result["shards"] == 3 and three.summary["shards"] == 3

    one.refresh_from_db()
    rows = [list(Candidate.objects.filter(run=r).order_by("query_position", "rank").values_list(*COLUMNS))
            for r in (one, three)]
    assert rows[0] == rows[1] and len(rows[0]) == one.summary["n_candidates"] > 11
    assert {r[8] for r in rows[0]} >= {"cit."} and all(r[5] is not None for r in rows[0])
    assert {k: v for k, v in one.summary.items() if k not in ("detect_s", "store_s", "shards")} == \
        {k: v for k, v in three.summary.items() if k not in ("detect_s", "store_s", "shards")}
