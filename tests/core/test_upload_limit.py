"""The per-file upload limit is applied while the body streams in (issue 10 §4): a request whose
Content-Length is over the limit is refused without reading its body, a file that grows past the
limit is dropped at that chunk, and the message names the limit and its setting."""
import io

import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.test import override_settings

from annotation.models import Verse
from core.upload_limit import upload_refusal

pytestmark = pytest.mark.django_db


class CountingStream(io.RawIOBase):
    """A request body of `size` bytes that counts what the server reads of it."""

    def __init__(self, size: int):
        self.size, self.read_bytes = size, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        n = min(len(buffer), self.size - self.read_bytes)
        buffer[:n] = b"x" * n
        self.read_bytes += n
        return n


def test_a_declared_60_mb_body_is_refused_without_reading_it():
    body = CountingStream(60 * 2**20)
    request = WSGIRequest({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "wsgi.input": body,
                           "CONTENT_TYPE": "multipart/form-data; boundary=xyz", "CONTENT_LENGTH": str(body.size),
                           "SERVER_NAME": "localhost", "SERVER_PORT": "80", "wsgi.url_scheme": "http"})
    message = upload_refusal(request)
    assert message == ("The upload is 60 MB; the limit is 20 MB per file (setting SIMILIA_MAX_UPLOAD_MB). "
                       "Split the file.")
    assert body.read_bytes == 0 and not request.FILES


@override_settings(SIMILIA_MAX_UPLOAD_BYTES=100_000)
def test_api_import_over_the_limit_is_413_before_parsing(users, client_for):
    from annotation.services.projects import project_create

    project = project_create(owner=users["lead"], name="up")
    big = io.BytesIO(b"verse_id,text\n" + b"".join(f"9 {k},{'a' * 90}\n".encode() for k in range(3000)))
    big.name = "big.csv"  # 290 KB: over the limit and the form allowance, so refused on its Content-Length
    response = client_for("lead").post(f"/api/v1/projects/{project.pk}/verses/import/", {"file": big}, format="multipart")
    assert response.status_code == 413
    assert response.json()["detail"].startswith("The upload is ") and "the limit is 100,000 bytes" in response.json()["detail"]
    assert "SIMILIA_MAX_UPLOAD_MB" in response.json()["detail"]
    assert not Verse.objects.filter(project=project).exists()


@override_settings(SIMILIA_MAX_UPLOAD_BYTES=1000)
def test_page_upload_over_the_limit_says_so_without_a_csrf_failure(users):
    from django.test import Client

    from annotation.services.projects import project_create

    project = project_create(owner=users["lead"], name="up-page")
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["lead"])
    big = io.BytesIO(b"verse_id,text\n" + b"".join(f"9 {k},{'a' * 90}\n".encode() for k in range(2000)))
    big.name = "big.csv"
    response = client.post(f"/projects/{project.pk}/verses/upload/", {"file": big}, follow=True)
    html = response.content.decode()  # core.middleware.UploadLimitMiddleware answers every page alike
    assert response.status_code == 413 and "Nothing was stored. The upload is" in html and "SIMILIA_MAX_UPLOAD_MB" in html
    assert not Verse.objects.filter(project=project).exists()


@override_settings(SIMILIA_MAX_UPLOAD_BYTES=1000)
def test_page_upload_within_the_limit_still_needs_the_csrf_token(users):
    from django.test import Client

    from annotation.services.projects import project_create

    project = project_create(owner=users["lead"], name="up-csrf")
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["lead"])
    small = io.BytesIO(b"verse_id,text\n9 1,a\n")
    small.name = "s.csv"
    assert client.post(f"/projects/{project.pk}/verses/upload/", {"file": small}).status_code == 403
    assert not Verse.objects.filter(project=project).exists()


def _big_file(name: str, n_bytes: int) -> io.BytesIO:
    f = io.BytesIO(b"seg_id,text\n" + b"a" * n_bytes)
    f.name = name
    return f


@override_settings(SIMILIA_MAX_UPLOAD_BYTES=1000)
def test_workbench_api_upload_over_the_limit_is_413_naming_the_limit(users, client_for):
    """Regression (issue 29): the API answered 400 "give either a file or a stored corpus"."""
    from workbench.models import Document

    response = client_for("researcher").post("/api/v1/workbench/documents/", {"file": _big_file("big.csv", 200_000)},
                                             format="multipart")
    assert response.status_code == 413
    assert "the limit is 1,000 bytes" in response.json()["detail"] and "SIMILIA_MAX_UPLOAD_MB" in response.json()["detail"]
    assert not Document.objects.exists()


@override_settings(SIMILIA_MAX_UPLOAD_BYTES=1000)
@pytest.mark.parametrize(("url", "field"), [("/workbench/", "query_file"), ("/benchmarks/pilots/", "verses_file")])
def test_page_uploads_over_the_limit_are_413_with_the_limit_not_a_bare_403(users, url, field):
    """Regression (issue 29): the workbench and pilot pages answered a bare 403 (the CSRF token was never read)."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(users["researcher"])
    response = client.post(url, {field: _big_file("big.csv", 200_000)})
    html = response.content.decode()
    assert response.status_code == 413 and "Nothing was stored" in html and "the limit is 1,000 bytes" in html
