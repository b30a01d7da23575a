"""Refuse a NUL character (or a lone surrogate) in the path, the headers, query parameters and page form fields, in one
place: `core.safejson.unstorable_character`, the check of every JSON body.

PostgreSQL cannot hold U+0000 in text, nor take it as a query parameter: a NUL that reaches a filter or a save is a
500 there (``/invite/a%00b/``, ``Authorization: Token a<NUL>b``, a session cookie) and is stored as is on SQLite.
The API's JSON bodies are checked by core.parsers, its form fields by DRF's CharField; this covers the rest."""
from __future__ import annotations

from typing import ClassVar

from django.http import HttpResponseBadRequest, JsonResponse

from core.safejson import unstorable_character


def _nul_field(data, what: str) -> str | None:
    for key, values in data.lists():
        problem = next(filter(None, map(unstorable_character, [key, *values])), None)
        if problem:
            shown = key.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode()
            return f"The {what} {shown!r} contains {problem}."
    return None


class RejectNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        api = request.path.startswith("/api/")
        problem = None
        if unstorable_character(request.path):
            problem = f"The address contains {unstorable_character(request.path)}."
        for header, value in request.META.items():
            if problem is None and header.startswith("HTTP_") and unstorable_character(str(value)):
                problem = f"The header {header[5:].replace('_', '-').title()} contains {unstorable_character(value)}."
        problem = problem or _nul_field(request.GET, "query parameter")
        if problem is None and request.method == "POST" and not api:  # DRF parses API bodies itself
            problem = _nul_field(request.POST, "form field")
        if problem is None:
            return self.get_response(request)
        if api:
            return JsonResponse({"detail": problem}, status=400)
        return HttpResponseBadRequest(problem, content_type="text/plain; charset=utf-8")


class UploadLimitMiddleware:
    """A POST whose file upload was refused for its size (core.upload_limit: while the body streams in) is answered
    413 with the limit here, for every page and API view: a page used to answer a bare 403 (the form's CSRF token
    was never read) and an API a misleading 400. Nothing was stored, so answering before the CSRF check changes
    nothing."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.content_type == "multipart/form-data":
            from core.upload_limit import upload_refusal

            refused = upload_refusal(request)
            if refused:
                if request.path.startswith("/api/"):
                    return JsonResponse({"detail": refused}, status=413)
                return FriendlyErrorPagesMiddleware.render(request, 413, f"Nothing was stored. {refused}")
        return self.get_response(request)


class FriendlyErrorPagesMiddleware:
    """403 and 404 pages in the site's layout, with the reason the code gave.

    Without it a PermissionDenied is a bare "403 Forbidden" and, under DEBUG (``make run``), a 404 is
    Django's technical page listing every URL pattern. The API keeps its JSON errors (DRF handles its
    views' exceptions itself; unknown /api/ addresses are left alone).

    Every 429, page or API, says when to come back: a throttle names its own wait; any other (the job quota:
    a job must finish first) gets `RETRY_AFTER` seconds.
    """

    RETRY_AFTER = 60

    REASONS: ClassVar[dict[int, str]] = {404: "There is no page at this address.",
                                         403: "You do not have access to this page."}
    TITLES: ClassVar[dict[int, str]] = {404: "Page not found", 403: "Not allowed", 400: "Request refused",
                                        409: "Not possible now", 413: "File too large", 429: "Too many requests",
                                        503: "Temporarily unavailable"}

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code == 429 and not response.has_header("Retry-After"):
            response["Retry-After"] = str(self.RETRY_AFTER)
        if (response.status_code in self.REASONS and not getattr(response, "similia_error_page", False)
                and self._page_request(request)
                and response.get("Content-Type", "").startswith("text/html")):
            return self.render(request, response.status_code, None)
        return response

    def process_exception(self, request, exception):
        from django.core.exceptions import PermissionDenied
        from django.http import Http404

        if not self._page_request(request):
            return None
        if isinstance(exception, Http404):
            return self.render(request, 404, None)  # Http404 texts name models and lookups: not for users
        if isinstance(exception, PermissionDenied):
            return self.render(request, 403, str(exception) or None)
        from core.errors import DomainError

        if isinstance(exception, DomainError):  # a service's refusal reaching a page: its status and message
            return self.render(request, exception.status, str(exception))
        return None

    @staticmethod
    def _page_request(request) -> bool:
        return not request.path.startswith(("/api/", "/admin/", "/static/"))

    @classmethod
    def render(cls, request, status: int, reason: str | None):
        from django.shortcuts import render

        response = render(request, "frontend/error.html",
                          {"status": status, "title": cls.TITLES.get(status, "Request refused"),
                           "reason": reason or cls.REASONS.get(status, "")},
                          status=status)
        response.similia_error_page = True
        return response
