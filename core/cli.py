"""The one command-line convention of the project (pure: no Django, usable by ``python -m ...`` entry points).

Every command that runs a detection method takes:

- ``--method NAME`` (``--method list`` prints the registry's methods of the kinds the command runs);
- ``--param KEY=VALUE``, repeatable: one method parameter each. The value is passed as text and converted by the
  method's declaration in the registry (``k1=1.2`` becomes a float, ``stopwords=false`` a bool); a JSON object,
  array or ``null`` is parsed as JSON (``preprocess={"strip_diacritics": true}``);
- ``--ks 1,10,100`` for evaluation cut-offs; ``--top-k N`` for how many results per query a command writes;
- ``--output PATH`` for the main result.

Bad input raises :class:`CommandInputError` (one message, no traceback): the ``python -m`` entry points print it
and exit with status 2; the Django management commands turn it into ``CommandError`` (``core.commands``).
Functions behind commands take keyword arguments only.
"""
from __future__ import annotations

import contextlib
import json
from typing import Callable, Iterable, Sequence

from core import safejson

__all__ = ["CommandInputError", "add_method_arguments", "method_command", "parse_ks", "parse_params", "user_errors"]


class CommandInputError(ValueError):
    """Bad command-line input: a bad option value, an unknown method or parameter, an unreadable file."""


def parse_params(items: Iterable[str] | None) -> dict:
    """``["k1=1.2", "b=0.75"]`` -> ``{"k1": "1.2", "b": "0.75"}`` (values converted later by the registry).

    A value that is a JSON object, array or ``null`` is parsed; anything else stays text. A repeated key or an
    item without ``=`` is refused.
    """
    out: dict = {}
    for item in items or []:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise CommandInputError(f"--param expects KEY=VALUE, got {item!r}")
        if key in out:
            raise CommandInputError(f"--param {key} given twice")
        value = value.strip()
        if value == "null" or value[:1] in ("{", "["):
            try:
                value = safejson.loads(value)
            except safejson.JSONRefused as exc:
                raise CommandInputError(f"--param {key}: {exc}") from None
            except json.JSONDecodeError as exc:
                raise CommandInputError(f"--param {key}: bad JSON ({exc.msg})") from None
        out[key] = value
    return out


def parse_ks(text) -> tuple[int, ...]:
    """``"10,100,1000"`` -> ``(10, 100, 1000)``: sorted, distinct, each ≥ 1."""
    try:
        ks = tuple(sorted({int(x) for x in str(text).replace(" ", "").split(",") if x}))
    except ValueError:
        raise CommandInputError(f"--ks expects comma-separated integers, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise CommandInputError(f"--ks expects integers ≥ 1, got {text!r}")
    return ks


def add_method_arguments(parser, *, default: str | None = None, what: str = "method") -> None:
    """``--method`` and the repeatable ``--param`` of the convention."""
    parser.add_argument("--method", default=default, required=default is None,
                        help=f"{what} name in the method registry; 'list' prints them")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="method parameter, repeatable (checked against what the method declares)")


def method_command(options: dict, *, required: Sequence[str], listing: Callable[[], str], stdout) -> bool:
    """Whether a method command should run: ``--method list`` writes ``listing()`` and returns False; otherwise
    the ``required`` options (and ``--method``) must be given."""
    if options.get("method") == "list":
        stdout.write(listing())
        return False
    missing = [f"--{name.replace('_', '-')}" for name in (*required, "method") if not options.get(name)]
    if missing:
        raise CommandInputError(f"{', '.join(missing)} required (--method list prints the methods)")
    return True


@contextlib.contextmanager
def user_errors(*types: type[BaseException]):
    """Re-raise the listed error types (bad files, unknown methods, bad parameters) as CommandInputError."""
    try:
        yield
    except CommandInputError:
        raise
    except types as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise CommandInputError(str(message)) from exc
