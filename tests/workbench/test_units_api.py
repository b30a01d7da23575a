"""A verse poem uploaded as .tess is searched line by line by default, or as windows of lines (``unit``)."""
import io

import pytest

from core.paths import shared_data_dir
from workbench.models import DetectionRun

pytestmark = pytest.mark.django_db
TESS = shared_data_dir() / "latin_texts" / "tesserae"


def _tess(path, refs) -> bytes:
    keep = {f"{r}" for r in refs}
    rows = [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("<") and line.split(">", 1)[0].split()[-1] in keep]
    return ("\n".join(rows) + "\n").encode()


def _upload(client, name, data):
    f = io.BytesIO(data)
    f.name = name
    return client.post("/api/v1/workbench/documents/", {"file": f}, format="multipart")


def test_verse_lines_windows_and_the_unit_on_the_run(client_for, client, users):
    from jobs.runner import run_job

    if not TESS.exists():
        pytest.skip("shared data not available")
    api = client_for("researcher")
    q = _upload(api, "lucan.tess", _tess(TESS / "lucan.bellum_civile.tess", [f"2.{i}" for i in range(10, 14)]))
    s = _upload(api, "aeneid.tess", _tess(TESS / "vergil.aeneid.tess", [f"7.{i}" for i in range(310, 318)]))
    assert q.status_code == 201 and q.json()["n_segments"] == 4  # one segment a line
    base = {"query_document": q.json()["id"], "source_document": s.json()["id"], "retriever": "bm25-lemma"}
    bad = api.post("/api/v1/workbench/runs/", {**base, "unit": "stanza"}, format="json")
    assert bad.status_code == 400 and "unit" in bad.json()
    created = api.post("/api/v1/workbench/runs/", {**base, "unit": "window-2", "top_k": 2}, format="json")
    assert created.status_code == 201, created.content
    run = DetectionRun.objects.get(pk=created.json()["id"])
    assert run.unit == "window-2" and run.job.params["unit"] == "window-2"
    assert run_job(run.job_id) == "succeeded"
    detail = api.get(f"/api/v1/workbench/runs/{run.pk}/").json()
    assert detail["unit"] == "window-2" and detail["summary"]["n_queries"] == 4
    page = api.get(f"/api/v1/workbench/runs/{run.pk}/candidates/").json()
    ids = {(c["query_id"], c["source_id"]) for c in page["results"]}
    # luc. 2.11 "Fatorum immoto ..." with 2.12, against the window 7.313-7.314 or 7.314-7.315 ("immota ... fatis")
    assert ("luc. 2.11", "verg. aen. 7.314") in ids or ("luc. 2.11", "verg. aen. 7.313") in ids
    page_client = client
    page_client.force_login(run.owner)
    assert "unit window-2" in page_client.get(f"/workbench/runs/{run.pk}/").content.decode()


def test_sentences_through_the_api_and_the_run_page(client_for, client):
    """unit=sentence: a candidate is reported on the segments where the two sentences start (luc. 2.7's sentence,
    'Fatorum immoto ...' at 2.11, against Juno's of aen. 7.313-7.316, 'atque immota manet fatis')."""
    from jobs.runner import run_job

    if not TESS.exists():
        pytest.skip("shared data not available")
    api = client_for("researcher")
    q = _upload(api, "lucan.tess", _tess(TESS / "lucan.bellum_civile.tess", [f"2.{i}" for i in range(4, 16)]))
    s = _upload(api, "aeneid.tess", _tess(TESS / "vergil.aeneid.tess", [f"7.{i}" for i in range(300, 330)]))
    created = api.post("/api/v1/workbench/runs/", {"query_document": q.json()["id"], "source_document": s.json()["id"],
                                                   "retriever": "channels", "unit": "sentence", "top_k": 2},
                       format="json")
    assert created.status_code == 201, created.content
    run = DetectionRun.objects.get(pk=created.json()["id"])
    assert run.unit == "sentence" and run.job.params["unit"] == "sentence"
    assert run_job(run.job_id) == "succeeded"
    detail = api.get(f"/api/v1/workbench/runs/{run.pk}/").json()
    assert detail["unit"] == "sentence"
    page = api.get(f"/api/v1/workbench/runs/{run.pk}/candidates/?page_size=50").json()
    first = {c["query_id"]: c for c in page["results"] if c["rank"] == 1}
    assert first["luc. 2.7"]["source_id"] == "verg. aen. 7.313"
    client.force_login(run.owner)
    assert "unit sentence" in client.get(f"/workbench/runs/{run.pk}/").content.decode()
