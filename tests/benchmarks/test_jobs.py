"""Job functions end to end on the real data: Loci Similes with a lexical retriever, STS, a DBBE pilot."""
import csv
import json

import pytest
from django.core.management import call_command

from benchmarks.models import EvaluationRun, PilotRun, SimilarityRun
from benchmarks.services import pilot_run_create, similarity_run_create
from jobs.models import Job
from jobs.runner import run_job


@pytest.mark.django_db
def test_evaluate_command_runs_the_job_and_stores_a_comparable_report(loci_version, tmp_path, users, client):
    out = tmp_path / "report.json"
    call_command("evaluate", "--benchmark", "loci-similes-545", "--method", "bm25-lemma", "--ks", "1,10,100",
                 "--reranker", "lexical-rule", "--output", str(out))
    run = EvaluationRun.objects.get()
    assert run.job.status == "succeeded" and run.job.kind == "benchmarks.loci_evaluate"
    assert run.job.result["run_id"] == run.pk and run.job.worker == "manage.py evaluate"
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["pool"]["n_queries"] == 463 and report["pool"]["n_sources"] == 408
    assert len(report["per_query"]) == 463 and len(run.per_fold) == 5
    assert report["split"]["name"] == "file:db" and report["run"]["method"] == "bm25-lemma"
    assert 0.5 < run.summary["recall@10"] <= run.summary["recall@100"] <= 1.0
    assert run.summary["cit_recall@10"] > run.summary["cf_recall@10"]
    assert 0 <= run.summary["pairwise_f1"] <= 1
    assert {"sweep", "classification", "error_rates", "table4"} <= set(report["pairwise"])

    # pages and exports of the finished run (the same data, no second evaluation)
    client.force_login(users["researcher"])
    page = client.get(f"/benchmarks/runs/{run.pk}/").content.decode()
    assert "<svg" in page and "Recall@k" in page and "Table 12" in page and 'http-equiv="refresh"' not in page
    rows = list(csv.DictReader(client.get(f"/benchmarks/runs/{run.pk}/per_query.csv").content.decode().splitlines()))
    assert len(rows) == 463 and set(rows[0]) == {"query_id", "fold", "n_gold", "n_cit", "n_cf", "recall@1",
                                                 "recall@10", "recall@100", "rr", "query_text", "top_sources"}
    assert all(r["query_text"] for r in rows) and all(1 <= len(r["top_sources"].split(" | ")) <= 10 for r in rows)
    pairs = list(csv.DictReader(client.get(f"/benchmarks/runs/{run.pk}/per_pair.csv").content.decode().splitlines()))
    assert len(pairs) == len(report["per_pair"]) and all(p["query_text"] and p["source_text"] for p in pairs)
    found = [p for p in pairs if p["rank"] == "1"]
    assert found and all(p["top_sources"].split(" | ")[0] == p["source_id"] for p in found)
    assert 'id="run-pool"' in page and "Pool: gold sources only" in page
    by_query = {r["query_id"]: r for r in run.per_query}
    assert float(rows[0]["recall@10"]) == pytest.approx(by_query[rows[0]["query_id"]]["recall@10"], abs=1e-6)
    fold_rows = list(csv.DictReader(client.get(f"/benchmarks/runs/{run.pk}/per_fold.csv").content.decode().splitlines()))
    assert [r["fold"] for r in fold_rows] == ["0", "1", "2", "3", "4"]
    board = client.get(f"/benchmarks/versions/{loci_version.pk}/?sort=mrr@10").content.decode()
    assert f'href="/benchmarks/runs/{run.pk}/"' in board and "mrr@10 ▼" in board


@pytest.mark.django_db
def test_evaluate_command_rejects_unknown_benchmark_and_method(loci_version):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no benchmark 'nope'"):
        call_command("evaluate", "--benchmark", "nope", "--method", "bm25-lemma")
    with pytest.raises(CommandError, match="unknown retrieval method"):
        call_command("evaluate", "--benchmark", "loci-similes-545", "--method", "nope")
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_sts_job_stores_metrics_and_predictions(gold_set, users, client):
    run = similarity_run_create(gold_set=gold_set, method="levenshtein", calibration="linear",
                                owner=users["researcher"])
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    assert run.report["n_pairs"] == 296 and len(run.report["predictions"]) == 296
    assert run.rmse == pytest.approx(run.report["rmse"]) and -1 <= run.spearman <= 1
    assert set(run.report["per_reference"]) == set(gold_set.pairs.values_list("reference_id", flat=True))
    client.force_login(users["lead"])
    page = client.get(f"/benchmarks/similarity-runs/{run.pk}/").content.decode()
    assert page.count("<svg") == 4 and "RMSE alone rewards matching the scale, not the ranking" in page
    predictions = client.get(f"/benchmarks/similarity-runs/{run.pk}/predictions.csv").content.decode().splitlines()
    assert predictions[0] == "reference_id,candidate_id,gold,predicted,predicted_raw,predicted_reverse"
    assert len(predictions) == 297


@pytest.mark.django_db(transaction=True)
def test_similarity_run_created_over_the_api_runs_at_commit(client_for, gold_set):
    response = client_for("researcher").post("/api/v1/sts/runs/", {"gold_set": gold_set.pk, "method": "char_ngram"},
                                             format="json")
    assert response.status_code == 201
    run = SimilarityRun.objects.get(pk=response.json()["id"])
    assert response.json()["job"] == run.job_id
    assert run.job.status == "succeeded" and run.report is not None  # eager Celery in tests


@pytest.mark.django_db
def test_pilot_job_sweeps_thresholds(settings, tmp_path, users, client):
    settings.DATA_DIR = tmp_path
    rows = [("t1", "v1", "o1", "g1", "κύριε ἐλέησον τὸν δοῦλον"), ("t1", "v2", "o2", "g1", "κύριε ἐλέησον τὸν δοῦλόν σου"),
            ("t2", "v3", "o3", "g2", "ἡ βίβλος αὕτη γέγραπται"), ("t2", "v4", "o4", "g2", "ἡ βίβλος αὕτη ἐγράφη"),
            ("t3", "v5", "o5", "", "δόξα σοι ὁ θεός")]
    with open(tmp_path / "verses.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["type_id", "id", "idoriginal_poem", "idgroup", "verse", "order"])
        writer.writerows([(*r, 1) for r in rows])
    run = pilot_run_create(verses_file="verses.csv", method="levenshtein", level="verse", owner=users["researcher"])
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    assert len(run.rows) == 19 and 0 < run.best_f1 <= 1 and run.report["n_items"] == 4
    client.force_login(users["researcher"])
    page = client.get(f"/benchmarks/pilots/{run.pk}/").content.decode()
    assert "<svg" in page and "Precision / recall / F1 vs threshold" in page
    assert PilotRun.objects.count() == 1


@pytest.mark.django_db
def test_pilot_refuses_files_outside_the_data_folders(settings, tmp_path):
    from benchmarks.services import RunError

    settings.DATA_DIR = tmp_path / "data"
    (tmp_path / "data").mkdir()
    (tmp_path / "secret.csv").write_text("x", encoding="utf-8")
    with pytest.raises(RunError, match="must lie under"):
        pilot_run_create(verses_file="../secret.csv", method="levenshtein")
