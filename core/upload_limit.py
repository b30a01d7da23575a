"""The per-file upload limit, enforced while the request body streams in.

`LimitedUploadHandler` is the first of settings.FILE_UPLOAD_HANDLERS. A request whose declared
Content-Length is already above the limit (plus room for the form's other fields) is answered
without reading its body; a file that grows past the limit while it streams (no or a false
Content-Length) is dropped at that chunk. Either way the request carries `upload_refused` (the
message) and views answer 413 with it: `upload_refusal(request)`.
"""
from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import QueryDict
from django.utils.datastructures import MultiValueDict

FORM_OVERHEAD = 64 * 1024  # boundaries, headers and small form fields beside the file


def size_text(n_bytes: int) -> str:
    return f"{round(n_bytes / 2**20, 1):g} MB" if n_bytes >= 2**20 else f"{n_bytes:,} bytes"


def too_large_message(*, size: int, filename: str = "The file", at_least: bool = False) -> str:
    limit = settings.SIMILIA_MAX_UPLOAD_BYTES
    return (f"{filename} is {'more than ' if at_least else ''}{size_text(size)}; the limit is {size_text(limit)} per "
            "file (setting SIMILIA_MAX_UPLOAD_MB). Split the file.")


class LimitedUploadHandler(FileUploadHandler):
    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        limit = settings.SIMILIA_MAX_UPLOAD_BYTES
        if content_length and content_length > limit + FORM_OVERHEAD:
            self._refuse(too_large_message(size=content_length, filename="The upload"))
            return QueryDict(encoding=encoding), MultiValueDict()  # parsed as empty: the body is never read
        return None

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data, start):
        self.received = start + len(raw_data)
        if self.received > settings.SIMILIA_MAX_UPLOAD_BYTES:
            self._refuse(too_large_message(size=self.received, filename=self.file_name or "The file", at_least=True))
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size):
        return None

    def _refuse(self, message: str) -> None:
        if self.request is not None:
            self.request.upload_refused = message


def upload_refusal(request) -> str | None:
    """The message when the request's upload was refused for its size (None otherwise). Reading it
    parses the body (through the handler above) if that has not happened yet."""
    django_request = getattr(request, "_request", request)
    if django_request.method == "POST":
        if django_request is request:
            request.FILES  # noqa: B018  (runs the upload handlers)
        else:
            request.data  # noqa: B018  (DRF parses through the same handlers)
    return getattr(django_request, "upload_refused", None)
