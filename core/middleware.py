"""Refuse a NUL character in query parameters and page form fields, in one place.

PostgreSQL cannot hold U+0000 in text: a NUL that reaches a filter or a save is a 500 there (and is
stored as is on SQLite). The API's JSON bodies are checked by core.parsers, its form fields by DRF's
CharField; this covers every query string and the pages' forms."""
from __future__ import annotations

from django.http import HttpResponseBadRequest, JsonResponse


def _nul_field(data, what: str) -> str | None:
    for key, values in data.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            shown = key.replace("\x00", "\\x00")
            return f"The {what} {shown!r} contains a NUL character (U+0000); no field accepts one."
    return None


class RejectNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        api = request.path.startswith("/api/")
        problem = _nul_field(request.GET, "query parameter")
        if problem is None and request.method == "POST" and not api:  # DRF parses API bodies itself
            problem = _nul_field(request.POST, "form field")
        if problem is None:
            return self.get_response(request)
        if api:
            return JsonResponse({"detail": problem}, status=400)
        return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")
