"""One DRF exception handler for the services' domain errors (core/exceptions.py)."""
import pytest

from annotation.importing import VerseFileError
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound
from benchmarks.services import GoldPublishError, RunError
from core.errors import DomainError
from core.exceptions import exception_handler
from jobs.services import JobError


@pytest.mark.parametrize("error, status", [
    (AnnotationError("rule"), 400), (NotAllowed("no"), 403), (NotFound("gone"), 404), (Conflict("again"), 409),
    (AnnotationError("custom", status=422), 422), (VerseFileError("f.csv, line 2: bad"), 400),
    (RunError("unknown method"), 400), (GoldPublishError("leads only"), 403), (JobError("finished"), 409),
])
def test_every_domain_error_is_answered_with_its_status_and_message(error, status):
    assert isinstance(error, DomainError)
    response = exception_handler(error, {})
    assert response.status_code == status and response.data == {"detail": str(error)}


def test_other_errors_are_left_to_drf():
    from rest_framework.exceptions import ValidationError

    assert exception_handler(ValidationError({"x": ["bad"]}), {}).status_code == 400
    assert exception_handler(ValueError("a bug"), {}) is None  # a 500, not hidden as a 4xx
    assert isinstance(RunError("x"), ValueError) and isinstance(GoldPublishError("x"), PermissionError)
