"""Query parameters, parsed strictly in one place.

`str.isdigit()` is True for "²" and "٣" (which int() then refuses) and int() accepts any length,
so a hand-written check per view let "²", a 5,000-digit number or 10**25 through to a 500. Here
integers are ASCII digits within bounds, datetimes are ISO 8601 that stay within year 1..9999 once
in UTC, and every failure is a DRF ValidationError naming the parameter (a 400)."""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping

from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import ValidationError

from core import safejson

ID_MAX = safejson.INT_MAX  # BigAutoField on SQLite and PostgreSQL
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class ParamError(ValueError):
    """A parameter that cannot be used; `message` says why, without the name."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= 40 else raw[:40] + "…")


def _bounds(min_value: int | None, max_value: int | None) -> str:
    if min_value is not None and max_value is not None:
        return f"between {min_value} and {max_value}"
    return f"at least {min_value}" if min_value is not None else f"at most {max_value}"


def parse_int(raw: str, name: str, *, min_value: int | None = None, max_value: int | None = None) -> int:
    """A whole number in ASCII digits (optional sign) within [min_value, max_value]."""
    if not _INTEGER.fullmatch(raw):
        raise ParamError(name, f"{_shown(raw)} is not a whole number (digits 0-9).")
    try:
        number = safejson.whole_number(raw)  # the one guarded reader of numbers: at most ±(2**63 - 1)
    except ValueError:
        raise ParamError(name, f"{_shown(raw)} is out of range; it must be {_bounds(min_value, max_value)}.") from None
    if (min_value is not None and number < min_value) or (max_value is not None and number > max_value):
        raise ParamError(name, f"{number} is out of range; it must be {_bounds(min_value, max_value)}.")
    return number


def parse_when(raw: str, name: str, *, end_of_day: bool = False) -> dt.datetime:
    """An ISO 8601 datetime (naive means UTC) or a date, returned in UTC.

    A date means its first instant, or with `end_of_day` its last (so `until=D` includes day D)."""
    problem = f"{_shown(raw)} is not an ISO 8601 date or datetime (e.g. 2026-05-01 or 2026-05-01T12:00:00+02:00)."
    if not raw.isascii():
        raise ParamError(name, problem)
    try:
        if _DATE.fullmatch(raw):
            day = dt.date.fromisoformat(raw)
            parsed = dt.datetime.combine(day, dt.time.max if end_of_day else dt.time.min, tzinfo=dt.timezone.utc)
        else:
            parsed = parse_datetime(raw)
    except ValueError:
        raise ParamError(name, problem) from None
    if parsed is None:
        raise ParamError(name, problem)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    try:
        return parsed.astimezone(dt.timezone.utc)
    except OverflowError:
        raise ParamError(name, f"{_shown(raw)} is outside the years 1 to 9999 in UTC.") from None


def _given(params: Mapping, name: str) -> str | None:
    raw = params.get(name)
    return None if raw is None or raw == "" else raw


def _as_validation_error(exc: ParamError) -> ValidationError:
    return ValidationError({exc.name: [exc.message]})


def query_int(params: Mapping, name: str, *, default: int | None = None, min_value: int | None = None,
              max_value: int | None = None) -> int | None:
    """`params[name]` as an int within bounds, `default` when absent or empty; 400 otherwise."""
    raw = _given(params, name)
    if raw is None:
        return default
    try:
        return parse_int(raw, name, min_value=min_value, max_value=max_value)
    except ParamError as exc:
        raise _as_validation_error(exc) from None


def query_id(params: Mapping, name: str) -> int | None:
    """A database id (1 .. 2**63 - 1), or None when absent."""
    return query_int(params, name, min_value=1, max_value=ID_MAX)


def query_datetime(params: Mapping, name: str, *, end_of_day: bool = False) -> dt.datetime | None:
    raw = _given(params, name)
    if raw is None:
        return None
    try:
        return parse_when(raw, name, end_of_day=end_of_day)
    except ParamError as exc:
        raise _as_validation_error(exc) from None


def query_choice(params: Mapping, name: str, choices: Iterable[str], *, default: str | None = None) -> str | None:
    raw = _given(params, name)
    if raw is None:
        return default
    allowed = list(choices)
    if raw not in allowed:
        raise ValidationError({name: [f"{_shown(raw)} is not one of {', '.join(allowed)}."]})
    return raw
