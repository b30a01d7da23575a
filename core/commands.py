"""The Django side of the command-line convention (:mod:`core.cli`): one place where a pure command's
:class:`core.cli.CommandInputError`, or a service's :class:`core.errors.DomainError` (the registry's
``ParamError`` among them), becomes Django's ``CommandError`` (exit status 1, the same message as the page and
the API show, no traceback)."""
from __future__ import annotations

import contextlib

from django.core.management.base import CommandError

from core.cli import CommandInputError
from core.errors import DomainError


@contextlib.contextmanager
def command_errors():
    try:
        yield
    except (CommandInputError, DomainError) as exc:
        raise CommandError(str(exc)) from None


def stderr_progress(stream):
    """A ``progress(fraction, message)`` callback that writes ``[  12.3 s]  45.0% message`` lines to ``stream``
    (a command's stderr), the seconds counted from this call: what long foreground commands report."""
    import sys
    import time

    t0 = time.perf_counter()

    def progress(fraction, message=""):
        stream.write(f"[{time.perf_counter() - t0:7.1f} s] {fraction:5.1%} {message}")
        sys.stderr.flush()

    return progress
