"""Exports in the `locisimiles` package's formats, checked the way the package reads them: its
`results_to_json` shape, and a ground-truth CSV whose label column pandas (`GroundTruth` uses `pd.read_csv`)
reads as integers. `scripts/check_locisimiles_roundtrip.py` reads them with the package itself."""
import io

import pandas as pd
import pytest

from workbench.models import Candidate
from workbench.services import verdict_set

pytestmark = pytest.mark.django_db


def test_results_in_the_package_json_shape(client_for, finished_detection):
    run = finished_detection
    body = client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/export/?as=locisimiles").json()
    rows = list(Candidate.objects.filter(run=run).select_related("query", "source").order_by("query_position", "rank"))
    assert sum(len(v) for v in body.values()) == len(rows)
    first = rows[0]
    match = body[first.query.seg_id][0]
    assert set(match) == {"source_id", "source_text", "candidate_score", "judgment_score", "predicted_class_id",
                          "predicted_label", "class_probabilities"}
    assert match["source_id"] == first.source.seg_id and match["candidate_score"] == pytest.approx(first.score)
    assert match["judgment_score"] == pytest.approx(max(first.p_cit, first.p_cf))
    assert match["predicted_label"] == {"cit.": "cit", "cf.": "cf", "": "no_match"}[first.label]
    assert sum(match["class_probabilities"].values()) == pytest.approx(1.0)
    labelled = {(q, m["source_id"]) for q, ms in body.items() for m in ms if m["judgment_score"] >= 0.2}
    assert labelled == {(c.query.seg_id, c.source.seg_id) for c in rows if c.label}  # thresholds 0.2 both
    refused = client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/export/?as=locisimiles&what=verdicts")
    assert refused.status_code == 400


def test_verdicts_csv_reads_as_integer_labels(client_for, finished_detection, users):
    run = finished_detection
    a, b, c = Candidate.objects.filter(run=run).order_by("query_position", "rank")[:3]
    for cand, decision in ((a, "cit."), (b, "unsure"), (c, "rejected")):
        verdict_set(candidate=cand, user=users["researcher"], decision=decision)
    client = client_for("researcher")
    table = pd.read_csv(io.StringIO(client.get(f"/api/v1/workbench/runs/{run.pk}/export/?what=verdicts").content
                                    .decode()))
    assert list(table.columns[:3]) == ["query_id", "source_id", "label"]
    assert str(table["label"].dtype) == "int64" and sorted(table["label"]) == [0, 1]  # "unsure" is not ground truth
    everything = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?what=verdicts&as=json").json()["verdicts"]
    assert sorted(v["decision"] for v in everything) == ["cit.", "rejected", "unsure"]


def test_a_loci_run_exports_results_and_gold_the_package_reads(client_for, loci_version):
    """A run's `results` table is the package's results_to_csv (each query's top 10) and its `per_pair` table starts
    with the ground-truth columns; the gold pairs among the results are exactly those ranked ≤ 10."""
    from benchmarks.services import evaluation_run_create
    from jobs.runner import run_job

    run = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=[1, 10], shards=1, enqueue=False)
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    client = client_for("researcher")
    results = pd.read_csv(io.StringIO(client.get(f"/api/v1/benchmarks/runs/{run.pk}/report.csv?table=results")
                                      .content.decode()))
    gold = pd.read_csv(io.StringIO(client.get(f"/api/v1/benchmarks/runs/{run.pk}/report.csv?table=per_pair")
                                   .content.decode()))
    assert list(results.columns) == ["query_id", "source_id", "source_text", "candidate_score", "judgment_score"]
    assert list(gold.columns[:3]) == ["query_id", "source_id", "label"] and set(gold["label"]) == {"cit.", "cf."}
    per_query = results.groupby("query_id", sort=False).size()
    assert len(per_query) == len(run.per_query) and per_query.max() == 10  # bm25 lists no zero-score source
    assert (results["judgment_score"] == 1.0).all()
    found = set(zip(results["query_id"], results["source_id"])) & set(zip(gold["query_id"], gold["source_id"]))
    assert len(found) == sum(1 for p in run.report["per_pair"] if p["rank"] and p["rank"] <= 10) > 400


def test_results_as_a_trec_run_read_back_in_the_runs_order(client_for, finished_detection):
    from benchmarks.suite.interchange import read_run, to_benchmark

    run = finished_detection
    resp = client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/export/?as=trec")
    assert resp.status_code == 200 and resp["Content-Disposition"].endswith('.trec"')
    text = resp.content.decode()
    rows = list(Candidate.objects.filter(run=run).select_related("query", "source").order_by("query_position", "rank"))
    assert len(text.splitlines()) == len(rows)
    back = to_benchmark(read_run("trec", text), {c.query.seg_id for c in rows}, {c.source.seg_id for c in rows},
                        strict=True)
    for qid, pairs in back.ranked.items():
        want = [c.source.seg_id for c in rows if c.query.seg_id == qid]
        assert [s for s, _ in pairs] == want
    assert client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/export/?as=trec&what=verdicts"
                                        ).status_code == 400
