"""A stored Loci Similes run's TREC export holds each query's whole ranked list to the run's depth (issue 25), with
sequential ranks and the documented tie-break, and ir-measures (pytrec_eval) scores it to the run's stored figures."""
from pathlib import Path

import ir_measures
import pytest
from ir_measures import RR, R

from benchmarks.suite import expected as E
from benchmarks.suite import interchange as IX

pytestmark = pytest.mark.django_db


def _lines_by_query(text):
    out = {}
    for line in text.splitlines():
        q, q0, s, rank, score, tag = line.split(" ")
        assert q0 == "Q0" and tag == "similia-bm25-lemma"
        out.setdefault(q, []).append((s, int(rank), float(score)))
    return out


def test_the_trec_run_holds_the_ranked_list_to_the_depth_and_rescores_to_the_stored_figures(page_client, users,
                                                                                            loci_version, tmp_path):
    from benchmarks.models import EvaluationRun
    from benchmarks.services import evaluation_run_create
    from jobs.runner import run_job

    ks = [1, 10, 100]
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=ks, shards=1, enqueue=False)
    assert run_job(run.job_id) == "succeeded"
    run = EvaluationRun.objects.get(pk=run.pk)
    assert run.report["pool"]["depth"] == 100 and run.report["trec_depth"] == 100
    client = page_client(users["researcher"])
    text = client.get(f"/benchmarks/runs/{run.pk}/run.trec").content.decode()
    by_q = _lines_by_query(text)
    assert len(by_q) == len(run.per_query)
    lengths = sorted(len(v) for v in by_q.values())
    assert lengths[-1] == 100 and lengths[len(lengths) // 2] > 10  # deeper than the stored head of 10
    for rows in by_q.values():
        assert [r for _, r, _ in rows] == list(range(1, len(rows) + 1))  # sequential ranks
        assert all(a[2] >= b[2] for a, b in zip(rows, rows[1:]))  # best first
    # the head is the stored top 10, in the same order
    head = {IX._enc(row["query_id"]): [IX._enc(s) for s, _ in row["top"]] for row in run.per_query}
    assert all([s for s, _, _ in by_q[q][:10]] == head[q] for q in by_q)
    # ties keep the method's order: rank-valued scores give the same order as the method's scores
    by_rank = client.get(f"/benchmarks/runs/{run.pk}/run.trec?scores=rank").content.decode()
    bad = client.get(f"/benchmarks/runs/{run.pk}/run.trec?scores=bm25")
    assert bad.status_code == 400 and "scores must be 'method'" in bad.content.decode()
    assert [line.split(" ")[:4] for line in by_rank.splitlines()] == [line.split(" ")[:4] for line in
                                                                      text.splitlines()]
    # ir-measures on the downloaded run and qrels gives each query's stored recall@k and reciprocal rank
    (tmp_path / "run.txt").write_text(by_rank, encoding="utf-8")
    (tmp_path / "qrels.txt").write_bytes(client.get(f"/benchmarks/runs/{run.pk}/qrels.txt").content)
    measures = [R @ 1, R @ 10, R @ 100, RR]
    got: dict = {}
    for m in ir_measures.iter_calc(measures, ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")),
                                   ir_measures.read_trec_run(str(tmp_path / "run.txt"))):
        got.setdefault(str(m.measure), {})[IX.unquote(m.query_id)] = m.value
    stored = {row["query_id"]: row for row in run.per_query}
    checked = 0
    for q, row in stored.items():
        for k in ks:
            assert abs(got[f"R@{k}"].get(q, 0.0) - row[f"recall@{k}"]) < 1e-9, (q, k)
        assert abs(got["RR"].get(q, 0.0) - row["rr"]) < 1e-9, q
        checked += 1
    assert checked == len(run.per_query) > 400
    # their means over the queries are the suite's stored bm25-lemma figures on the same gold
    # (perf/expected/suite_short.yaml; the run's summary averages the fold means instead)
    spec = E.load(Path(__file__).resolve().parents[2] / "perf" / "expected" / "suite_short.yaml")
    want = spec["figures"]["loci-similes"]["bm25-lemma"]
    for k in ks:
        mean = sum(got[f"R@{k}"].get(q, 0.0) for q in stored) / len(stored)
        assert abs(mean - want[f"R@{k}"]) <= 0.00005, k
