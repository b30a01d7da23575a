"""The Django side of the command-line convention (:mod:`core.cli`): one place where a pure command's
:class:`core.cli.CommandInputError` becomes Django's ``CommandError`` (exit status 1, message without a traceback)."""
from __future__ import annotations

import contextlib

from django.core.management.base import CommandError

from core.cli import CommandInputError


@contextlib.contextmanager
def command_errors():
    try:
        yield
    except CommandInputError as exc:
        raise CommandError(str(exc)) from None
