"""Plain SQL for the few requests that run all day (an annotator's next set and submit, token authentication).

Django spends far more CPU building a statement than the database spends running it: 0.3–1 ms per ORM
statement here against 0.05–0.1 ms to send the same SQL as text. Two helpers keep the ORM's rules while
skipping that cost:

- `columns` / `instance`: select a model's columns by hand and build the instance from the row with the same
  database converters the ORM applies (SQLite returns naive datetimes and JSON as text).
- `QueryTemplate`: a queryset built and compiled **once** with stand-in values for its ids, then run with
  other ids as plain SQL. The queryset stays the one source of the rule (an annotation mode's filter, for
  instance); only the compiling is skipped. The shape of the query must not depend on the values (it may
  depend on anything in the template's key).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import Model, QuerySet

# Stand-in ids: negative, so they never equal a real id, and far apart from any constant a filter holds.
_STAND_IN = -7_346_291_000_000


def _converters(field) -> list:
    """The database converters of one field, with the column expression each is called with, as the ORM's
    compiler finds them."""
    expression = field.get_col(field.model._meta.db_table)
    return [(c, expression) for c in connection.ops.get_db_converters(expression) + field.get_db_converters(connection)]


@functools.cache
def _fields(model: type[Model]) -> list:
    """The model's concrete fields with the database converters of each."""
    return [(field.attname, field.column, _converters(field)) for field in model._meta.concrete_fields]


def _convert(value, converters: list):
    for converter, expression in converters:
        value = converter(value, expression, connection)
    return value


def id_in_range(model: type[Model], value: int) -> bool:
    """Whether `value` fits the model's integer primary key (the ORM answers "no rows" for one that does not;
    SQLite's driver would raise instead)."""
    low, high = connection.ops.integer_field_range(model._meta.pk.get_internal_type())
    return (low is None or value >= low) and (high is None or value <= high)


def columns(model: type[Model], alias: str) -> str:
    """`alias."col", …` for every concrete field of `model`, in the order `instance` reads them."""
    q = connection.ops.quote_name
    return ", ".join(f"{alias}.{q(column)}" for _, column, _ in _fields(model))


def convert(values: Sequence, model: type[Model]) -> list:
    """A row of `columns(model, …)` as the ORM would hand the values to the model."""
    return [_convert(value, converters) for value, (_, _, converters) in zip(values, _fields(model))]


def convert_value(value, field):
    """One column's value as the ORM would hand it to the model (`field`'s converters)."""
    return _convert(value, _converters(field))


def instance(model: type[Model], values: Sequence) -> Model:
    """The model instance of a row of `columns(model, …)` (as if loaded by the ORM)."""
    return model.from_db(connection.alias, [attname for attname, _, _ in _fields(model)], convert(values, model))


class QueryTemplate:
    """A queryset compiled once, run again with other values for its named ids.

    `build(**ids)` returns the queryset for integer ids. It is compiled with stand-in ids, found again among
    the compiled parameters (a name the query does not use is fine), and once more with `ids`, the first
    real ones: that SQL must be the template's with the real ids put in, or the template is refused (a
    filter whose SQL depends on more than the ids, say one that ran a query of its own, cannot be one).
    `rows(**ids)` then runs the SQL with other ids: what `list(build(**ids))` would fetch, as tuples."""

    def __init__(self, build: Callable[..., QuerySet], ids: dict[str, int]):
        stand_ins = {name: _STAND_IN - k for k, name in enumerate(ids)}
        self.sql, params = _compiled(build(**stand_ins))
        by_value = {value: name for name, value in stand_ins.items()}
        self.slots = [(by_value.get(p) if type(p) is int else None, p) for p in params]
        if _compiled(build(**ids)) != (self.sql, self._params(ids)):
            raise ValueError("The query's SQL depends on more than its ids; it cannot be a template.")

    def _params(self, ids: dict[str, int]) -> tuple:
        return tuple(p if name is None else ids[name] for name, p in self.slots)

    def rows(self, **ids: int) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(self.sql, self._params(ids))
            return cursor.fetchall()


def _compiled(queryset: QuerySet) -> tuple[str, tuple]:
    try:
        sql, params = queryset.query.get_compiler(queryset.db).as_sql()
    except (EmptyResultSet, FullResultSet):  # the ORM decided in Python, from values: no SQL to reuse
        raise ValueError("The query's SQL depends on more than its ids; it cannot be a template.") from None
    return sql, tuple(params)
