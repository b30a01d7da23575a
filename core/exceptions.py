"""The one DRF exception handler: DRF's own, plus every :class:`core.errors.DomainError` (the services'
refusals: annotation rules, bad run requests, gold publishing, job cancelling, verse files) answered as
``{"detail": message}`` with the error's ``status``."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        set_rollback()
        return Response({"detail": str(exc)}, status=exc.status)
    return drf_exception_handler(exc, context)
