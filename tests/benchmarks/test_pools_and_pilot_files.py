"""Issue 14 quick fixes: the pool a Loci Similes run ranks against (chosen, shown, never mixed on the
leaderboard) and DBBE pilot verses files picked by key or uploaded (never a server path)."""
import csv
import io

import pytest

from benchmarks.models import EvaluationRun, PilotRun
from benchmarks.services import RunError, evaluation_run_create
from jobs.models import Job
from jobs.runner import run_job

PILOT_HEADER = ["type_id", "id", "idoriginal_poem", "idgroup", "verse", "order"]
PILOT_ROWS = [("t1", "v1", "o1", "g1", "κύριε ἐλέησον τὸν δοῦλον", 1),
              ("t1", "v2", "o2", "g1", "κύριε ἐλέησον τὸν δοῦλόν σου", 1),
              ("t2", "v3", "o3", "g2", "ἡ βίβλος αὕτη γέγραπται", 1),
              ("t2", "v4", "o4", "g2", "ἡ βίβλος αὕτη ἐγράφη", 1)]


def _csv_bytes(header, rows) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def _finished(version, method, pool, r10, owner):
    job = Job.objects.create(kind="benchmarks.loci_evaluate", status="succeeded", owner=owner)
    return EvaluationRun.objects.create(version=version, method=method, job=job, owner=owner, ks=[10],
                                        report={"pool": {"kind": pool, "n_sources": 408, "n_queries": 463}},
                                        summary={"pool": pool, "recall@10": r10})


@pytest.mark.django_db
def test_pool_is_chosen_kept_and_validated(loci_version, users):
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", pool="corpus", owner=users["researcher"],
                                enqueue=False)
    assert run.summary == {"pool": "corpus"}
    with pytest.raises(RunError, match="pool must be one of gold, corpus"):
        evaluation_run_create(version=loci_version, method="bm25-lemma", pool="everything")


@pytest.mark.django_db
def test_leaderboard_never_ranks_pools_together(client, client_for, loci_version, users):
    gold_run = _finished(loci_version, "bm25-lemma", "gold", 0.93, users["researcher"])
    corpus_run = _finished(loci_version, "tfidf-lemma", "corpus", 0.70, users["researcher"])
    legacy = _finished(loci_version, "bm25-surface", "gold", 0.91, users["researcher"])
    legacy.summary = {"recall@10": 0.91}  # a run from before the choice: its report says gold
    legacy.save()
    client.force_login(users["researcher"])
    gold_page = client.get(f"/benchmarks/versions/{loci_version.pk}/").content.decode()
    board = gold_page[gold_page.index('id="leaderboard"'):gold_page.index('id="launch"')]
    assert f'href="/benchmarks/runs/{gold_run.pk}/"' in board and f'href="/benchmarks/runs/{legacy.pk}/"' in board
    assert f'href="/benchmarks/runs/{corpus_run.pk}/"' not in board
    assert "gold (2 runs)" in board and "corpus (1 run)" in board
    corpus_page = client.get(f"/benchmarks/versions/{loci_version.pk}/?pool=corpus").content.decode()
    board = corpus_page[corpus_page.index('id="leaderboard"'):corpus_page.index('id="launch"')]
    assert f'href="/benchmarks/runs/{corpus_run.pk}/"' in board and f'href="/benchmarks/runs/{gold_run.pk}/"' not in board
    assert "Leaderboard · pool: full source corpus" in board
    api = client_for("researcher")
    ids = {r["id"]: r["pool"] for r in api.get("/api/v1/benchmarks/runs/?pool=corpus").json()["results"]}
    assert ids == {corpus_run.pk: "corpus"}
    assert {r["id"] for r in api.get("/api/v1/benchmarks/runs/?pool=gold").json()["results"]} == {gold_run.pk, legacy.pk}
    assert api.get("/api/v1/benchmarks/runs/?pool=x").status_code == 400
    run_page = client.get(f"/benchmarks/runs/{corpus_run.pk}/").content.decode()
    assert "Pool: full source corpus" in run_page and "?pool=corpus" in run_page


@pytest.mark.django_db
def test_api_launch_takes_a_pool(client_for, loci_version):
    response = client_for("researcher").post("/api/v1/benchmarks/runs/", {
        "version": loci_version.pk, "method": "tfidf-lemma", "pool": "corpus", "ks": [1, 10]}, format="json")
    assert response.status_code == 201 and response.json()["pool"] == "corpus"
    run = EvaluationRun.objects.get(pk=response.json()["id"])
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    assert run.report["pool"]["kind"] == "corpus" and run.summary["pool"] == "corpus"  # eager job in tests
    bad = client_for("researcher").post("/api/v1/benchmarks/runs/", {
        "version": loci_version.pk, "method": "tfidf-lemma", "pool": "/etc"}, format="json")
    assert bad.status_code == 400 and "pool" in bad.json()


@pytest.mark.django_db
def test_pilot_form_lists_stored_files_and_takes_no_path(client, settings, tmp_path, users):
    settings.DATA_DIR = tmp_path / "data"
    settings.VAR_DIR = tmp_path / "var"
    (tmp_path / "data" / "dbbe").mkdir(parents=True)
    (tmp_path / "data" / "dbbe" / "dbbe_verses_sample.csv").write_bytes(_csv_bytes(PILOT_HEADER, PILOT_ROWS))
    (tmp_path / "data" / "dbbe" / "other.csv").write_text("a,b\n1,2\n", encoding="utf-8")  # not a verses file
    client.force_login(users["researcher"])
    html = client.get("/benchmarks/pilots/").content.decode()
    assert '<option value="data:dbbe/dbbe_verses_sample.csv" selected>' in html and "other.csv" not in html
    assert 'enctype="multipart/form-data"' in html
    response = client.post("/benchmarks/pilots/", {"method": "levenshtein", "params": "{}", "level": "verse",
                                                   "verses_file": "data:dbbe/dbbe_verses_sample.csv"})
    run = PilotRun.objects.get()
    assert response.status_code == 302 and run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    assert run.report["n_items"] == 4
    assert run.verses_name == "dbbe_verses_sample.csv"
    refused = client.post("/benchmarks/pilots/", {"method": "levenshtein", "params": "{}", "level": "verse",
                                                  "verses_file": "/etc/passwd"})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert PilotRun.objects.count() == 1


@pytest.mark.django_db
def test_pilot_upload_is_checked_stored_and_run(client, settings, tmp_path, users):
    settings.DATA_DIR = tmp_path / "data"
    settings.SHARED_DATA_DIR = tmp_path / "shared"
    settings.VAR_DIR = tmp_path / "var"
    client.force_login(users["researcher"])
    html = client.get("/benchmarks/pilots/").content.decode()
    assert "no verses file is stored yet: upload one" in html
    bad = io.BytesIO(_csv_bytes(["type_id", "id", "verse"], PILOT_ROWS))
    bad.name = "mine.csv"
    response = client.post("/benchmarks/pilots/", {"method": "levenshtein", "params": "{}", "level": "verse",
                                                   "upload": bad})
    assert response.status_code == 200 and "missing columns" in response.content.decode()
    assert "mine.csv:1" in response.content.decode() and not PilotRun.objects.exists()
    good = io.BytesIO(_csv_bytes(PILOT_HEADER, PILOT_ROWS))
    good.name = "my verses.csv"
    response = client.post("/benchmarks/pilots/", {"method": "levenshtein", "params": "{}", "level": "type",
                                                   "upload": good})
    run = PilotRun.objects.get()
    assert response.status_code == 302 and run_job(run.job_id) == "succeeded" and run.verses_name.endswith("-my_verses.csv")
    assert "upload:" + run.verses_name in client.get("/benchmarks/pilots/").content.decode()


@pytest.mark.django_db
def test_a_version_with_the_whole_corpus_makes_the_corpus_pool_real(tmp_path, users):
    """`load_benchmarks --corpus-dir`: gold segments matched into a larger corpus; the corpus pool then ranks
    against every source segment, the gold pool against the cited ones only."""
    from django.core.management import call_command

    from benchmarks.loci.data import load_pairs_545
    from benchmarks.models import BenchmarkVersion
    from tests.benchmarks.conftest import LOCI_DIR, REF_TYPE, WITH_TEXT

    bench = load_pairs_545(WITH_TEXT, REF_TYPE)
    examples = LOCI_DIR / "package_examples"
    distractors = list(csv.reader((examples / "vergil_samples.csv").open(encoding="utf-8")))[1:]
    with (tmp_path / "source.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["seg_id", "text", "author", "work"])
        writer.writerows([(s.seg_id, s.text, s.author, s.work) for s in bench.sources])
        writer.writerows([(f"distractor {i}", text, "Vergilius", "aen") for i, (_, text) in enumerate(distractors)])
    (tmp_path / "query.csv").write_bytes((examples / "hieronymus_samples.csv").read_bytes())
    call_command("load_benchmarks", "--loci-dir", str(LOCI_DIR), "--name", "loci-full", "--corpus-dir", str(tmp_path))
    version = BenchmarkVersion.objects.get(benchmark__name="loci-full")
    assert version.gold.count() == 545 and version.provenance["corpus"]["source_segments"] == 408 + len(distractors)
    pools = {}
    for pool in ("gold", "corpus"):
        run = evaluation_run_create(version=version, method="bm25-lemma", pool=pool, ks=[1, 10], enqueue=False,
                                    owner=users["researcher"])
        assert run_job(run.job_id) == "succeeded"
        run.refresh_from_db()
        pools[pool] = run.report["pool"]
    assert pools["gold"]["n_sources"] == 408 and pools["corpus"]["n_sources"] == 408 + len(distractors)
