"""The explorer with 100,000 candidate rows: a fixed, small number of SQL queries per page, whatever the page."""
import time

import pytest
from django.db import connection

from jobs.models import Job
from workbench.models import Candidate, DetectionRun, Document, DocumentSegment, Verdict

pytestmark = pytest.mark.django_db
N_QUERIES, TOP_K = 10_000, 10


@pytest.fixture
def big_run(users):
    owner = users["researcher"]
    qdoc = Document.objects.create(name="q", format="csv", owner=owner, n_segments=N_QUERIES)
    sdoc = Document.objects.create(name="s", format="csv", owner=owner, n_segments=TOP_K)
    with connection.cursor() as cursor:  # 10,000 query segments in one statement
        cursor.execute(
            "INSERT INTO workbench_documentsegment (document_id, position, seg_id, author, work, text) "
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %s) "
            "SELECT %s, i, 'hier. epist. ' || CAST(i AS TEXT) || '.1', 'Hieronymus', '',"
            " 'arma uirumque cano ' || CAST(i AS TEXT) FROM n", [N_QUERIES - 1, qdoc.pk])
    DocumentSegment.objects.bulk_create(
        [DocumentSegment(document=sdoc, position=j, seg_id=f"verg. aen. 1.{j}", author="Vergilius",
                         text=f"arma uirumque cano Troiae {j}") for j in range(TOP_K)])
    job = Job.objects.create(kind="benchmarks.detect", status="succeeded", owner=owner)
    run = DetectionRun.objects.create(owner=owner, query_document=qdoc, source_document=sdoc, retriever="bm25-lemma",
                                      top_k=TOP_K, job=job, reranker="lexical-rule",
                                      summary={"n_queries": N_QUERIES, "n_sources": TOP_K,
                                               "n_candidates": N_QUERIES * TOP_K})
    # one INSERT … SELECT over query × source segments (100k rows in about a second, on SQLite and PostgreSQL)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO workbench_candidate (run_id, query_id, source_id, query_position, rank, score, p_none, p_cit,"
            " p_cf, label, shared_lemmas, bucket) "
            "SELECT %s, q.id, s.id, q.position, s.position + 1, 10.0 - s.position, 0.1,"
            " CASE WHEN s.position = 0 THEN 0.8 ELSE 0.1 END, 0.1, CASE WHEN s.position = 0 THEN 'cit.' ELSE '' END,"
            " 3, CASE WHEN s.position < 3 THEN 'bigram' ELSE 'one_lemma' END "
            "FROM workbench_documentsegment q CROSS JOIN workbench_documentsegment s "
            "WHERE q.document_id = %s AND s.document_id = %s", [run.pk, qdoc.pk, sdoc.pk])
    assert Candidate.objects.filter(run=run).count() == N_QUERIES * TOP_K
    with connection.cursor() as cursor:  # the statistics autovacuum would gather once a real run commits
        for table in ("workbench_documentsegment", "workbench_candidate"):
            cursor.execute(f"ANALYZE {table}")
    return run


def test_100k_candidates_page_with_a_fixed_number_of_queries(big_run, client_for, client, users,
                                                             django_assert_max_num_queries):
    django_client = client
    client = client_for("researcher")
    url = f"/api/v1/workbench/runs/{big_run.pk}/candidates/"
    Verdict.objects.create(candidate=Candidate.objects.get(run=big_run, query_position=5000, rank=1),
                           user=big_run.owner, decision="cit.")
    for query in ("?page_size=100", "?page=500&page_size=100", "?label=cit.&page=80", "?bucket=bigram&min_score=8",
                  "?verdict=unverified&page=900&page_size=100", "?q=epist. 4242", "?order=score&page=500&page_size=100"):
        t0 = time.perf_counter()
        with django_assert_max_num_queries(8):  # auth token + run + count + page + verdicts of the page
            body = client.get(url + query).json()
        # the bound is on SQL queries, not seconds: perf/workbench_bench.py measures the time
        print(f"API {query}: {time.perf_counter() - t0:.2f} s")
        assert body["results"], query
    assert client.get(url + "?page_size=100").json()["count"] == 100_000
    deep = client.get(url + "?page=500&page_size=100").json()["results"]
    assert deep[0]["query_id"] == "hier. epist. 4990.1" and deep[0]["rank"] == 1
    assert client.get(url + "?label=cit.").json()["count"] == 10_000
    best = client.get(url + "?order=score&page=101&page_size=100").json()["results"]  # all 10,000 rank-1 rows come first
    assert [(r["query_id"], r["rank"]) for r in best[:2]] == [("hier. epist. 0.1", 2), ("hier. epist. 1.1", 2)]
    assert client.get(url + "?verdict=unverified&page_size=1").json()["count"] == 99_999

    # the explorer page (HTML) on the same 100k rows
    client = django_client
    client.force_login(users["researcher"])
    for query in ("", "?page=1500", "?label=cit.&author_pair=Hieronymus+→+Vergilius", "?order=score&page=1500"):
        t0 = time.perf_counter()
        with django_assert_max_num_queries(16):
            response = client.get(f"/workbench/runs/{big_run.pk}/{query}")
        print(f"page {query or '(first)'}: {time.perf_counter() - t0:.2f} s")
        html = response.content.decode()
        assert response.status_code == 200, query
        assert html.count('class="cand"') == 50 and len(html) < 200_000
    assert "100000 candidates · page 1500 of 2000" in client.get(f"/workbench/runs/{big_run.pk}/?page=1500").content.decode()
