"""The answer to an error no view handled (`handler500`): never a stack trace, and 503 with Retry-After when
the cause is an outage (the database or the cache does not answer), so clients know to come back.

Pages get a short page of their own that needs nothing from the database (the layout's menu reads the user's
roles); the API gets `{"detail": ...}` JSON. The annotator page retries a 5xx with its queue kept in the
browser (annotation/static/annotation/annotate.js), so an outage costs annotators no choice.
"""
from __future__ import annotations

import errno
import logging
import sys

from django.db import DatabaseError, DataError, IntegrityError, NotSupportedError, ProgrammingError
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 15

_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>{title} <small style="color: #666">({status})</small></h1><p>{reason}</p>
<p><a href="{path}">Try again</a> · <a href="/">Home</a></p></body></html>"""


def is_outage(exc: BaseException | None) -> bool:
    """True for a database that cannot be reached or answered (any DatabaseError but a programming error or an
    integrity error: those are bugs or conflicts, not outages; a full disk under the database is one), for a full
    disk under the var directory (ENOSPC) and for a cache/broker connection error."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return True
    if isinstance(exc, DatabaseError):
        return not isinstance(exc, (IntegrityError, ProgrammingError, DataError, NotSupportedError))
    module = type(exc).__module__ or ""
    return module.startswith(("redis", "kombu")) and type(exc).__name__ in {
        "ConnectionError", "TimeoutError", "OperationalError", "BusyLoadingError"}


def server_error(request, *args, **kwargs):
    exc = sys.exc_info()[1]
    outage = is_outage(exc)
    status = 503 if outage else 500
    if outage:
        logger.warning("answered 503 for %s: %s: %s", request.path, type(exc).__name__, exc)
        title = "Temporarily unavailable"
        reason = ("The service cannot reach its database right now (a restart or maintenance). Nothing you saved "
                  f"is lost. Try again in {RETRY_AFTER_SECONDS} seconds.")
    else:
        title = "Server error"
        reason = "Something went wrong on the server; it has been logged. Try again, or tell the site's team."
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": reason}, status=status)
    else:
        response = HttpResponse(_PAGE.format(title=title, status=status, reason=escape(reason),
                                             path=escape(request.get_full_path())),
                                status=status, content_type="text/html; charset=utf-8")
    if outage:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
