"""The base of the domain errors (pure: no Django).

A service that refuses a request raises a subclass of :class:`DomainError` with the HTTP status it means
(``status``); the API's one exception handler (``core.exceptions.exception_handler``) answers it as
``{"detail": message}`` with that status, so API views need no try/except of their own.
"""
from __future__ import annotations


class DomainError(Exception):
    """A request that breaks a rule of the domain; ``status`` is the HTTP status an API answers with."""

    status = 400

    def __init__(self, *args, status: int | None = None):
        super().__init__(*args)
        if status is not None:  # this refusal's own status (e.g. 409 for one the object's state causes)
            self.status = status


class RunError(DomainError, ValueError):
    """A run request that cannot be honoured (unknown method, bad parameters): an evaluation, a training, a
    detection. The apps' own run errors subclass it."""
