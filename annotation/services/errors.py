from core.errors import DomainError


class AnnotationError(DomainError):
    """A request that breaks a rule of the annotation workflow; `status` is the HTTP status to use."""

    status = 400


class NotAllowed(AnnotationError):
    status = 403


class NotFound(AnnotationError):
    status = 404


class Conflict(AnnotationError):
    status = 409
