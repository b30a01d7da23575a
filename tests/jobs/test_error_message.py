"""A failed job's error reads as a sentence on every page and in the API's ``error_message``: no traceback, no
server path (the full text stays in ``Job.error``, shown to staff only)."""
import pytest

from jobs.models import Job, error_sentence
from jobs.registry import job_kind
from jobs.runner import run_job


@job_kind("test.read_missing_model", queue="cpu")
def _read_missing_model(job, *, folder: str):
    with open(f"{folder}/manifest.json", encoding="utf-8") as fh:  # a real failure of a real open()
        return {"read": len(fh.read())}


@pytest.mark.django_db
def test_a_failed_job_shows_a_sentence_not_a_traceback(client, users, tmp_path):
    folder = tmp_path / "models" / "la-lemma-cbow200"
    job = Job.objects.create(kind="test.read_missing_model", params={"folder": str(folder)}, owner=users["researcher"])
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert "Traceback" in job.error_detail and str(tmp_path) in job.error_detail  # the full record is kept (staff)
    assert "Traceback" not in job.error and str(tmp_path) not in job.error
    assert job.error_message == "No such file or directory: 'manifest.json'."
    client.force_login(users["researcher"])
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "No such file or directory: &#x27;manifest.json&#x27;." in html
    error_part = html.split('class="error-text">', 1)[1].split("<h2>", 1)[0]  # (the test's own params hold a path)
    assert "Traceback" not in html and str(tmp_path) not in error_part
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert api["error_message"] == job.error_message
    client.force_login(users["staff"])
    assert "Traceback" in client.get(f"/jobs/{job.pk}/").content.decode()  # staff may open the full error


@pytest.mark.parametrize("error, sentence", [
    ("ModelUnavailable: word-vector model 'x' is not in the models directory /srv/similia/var/models; train it\n\n"
     "Traceback (most recent call last):\n  File \"/srv/similia/detection/methods/word_vectors.py\", line 9",
     "Word-vector model 'x' is not in the models directory models; train it."),
    ("Timed out: the job ran past the soft time limit of 300 s.", "Timed out: the job ran past the soft time limit of 300 s."),
    ("Traceback (most recent call last):\n  File \"/a/b.py\", line 3, in f\nKeyError: 'fold'", "KeyError: 'fold'."),
    ("detection.methods.registry.ParamError: parameter 'k1': must be ≤ 10, not 99",
     "Parameter 'k1': must be ≤ 10, not 99."),
    (r"OSError: cannot read C:\Users\me\texts\aeneid.txt", "Cannot read aeneid.txt."),
    ("", ""),
])
def test_error_sentence(error, sentence):
    assert error_sentence(error) == sentence
