"""Writing many rows at once: COPY on PostgreSQL (psycopg 3), one executemany elsewhere.

Django's `bulk_create` builds a model instance per row and one INSERT per `batch_size` rows; for a
600-candidate batch (179,700 pairs) that is most of the time. These writers take plain tuples.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterable, Sequence

from django.db import connection, transaction

CHUNK = 50_000  # rows per COPY/executemany and, without the caller's transaction, per commit
SQLITE_CACHE_KIB = 65_536  # page cache while inserting: a new batch's random `rank` index fits in it


@contextmanager
def _sqlite_cache():
    """SQLite's default 2 MiB page cache spills the (batch, taken, rank) index of a 180,000-pair batch,
    whose keys arrive in random order; a larger cache for the insert saves about a fifth of its time."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        before = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA cache_size = {int(before)}")


def _copy_available() -> bool:
    if connection.vendor != "postgresql":
        return False
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return False
    return hasattr(connection.connection, "cursor") and type(connection.connection).__module__.startswith("psycopg")


def rows_insert(table: str, columns: Sequence[str], rows: Iterable[tuple], *, total: int | None = None,
                progress: Callable[[float, str], None] | None = None) -> int:
    """Insert `rows` (tuples in `columns` order) into `table`; returns the number written.

    In chunks of CHUNK rows: PostgreSQL with psycopg 3 `COPY … FROM STDIN`, otherwise `executemany`. `progress(fraction, message)` is called after each chunk when `total` is known. Runs in
    the caller's transaction; ids are not returned (read them back by a natural key when needed).
    """
    quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
    name = connection.ops.quote_name(table)
    connection.ensure_connection()
    use_copy = _copy_available()
    marks = ", ".join(["%s"] * len(columns))
    written = 0
    with _sqlite_cache():
        for chunk in _chunks(rows, CHUNK):
            # One transaction per chunk when the caller has none (a job showing progress): in autocommit
            # mode SQLite would commit, and sync to disk, after every row.
            with transaction.atomic(savepoint=False), connection.cursor() as cursor:
                if use_copy:
                    with cursor.cursor.copy(f"COPY {name} ({quoted}) FROM STDIN") as copy:  # psycopg 3 under Django
                        for row in chunk:
                            copy.write_row(row)
                else:
                    cursor.executemany(f"INSERT INTO {name} ({quoted}) VALUES ({marks})", chunk)
            written += len(chunk)
            if progress and total:
                progress(min(written / total, 1.0), f"{written:,} of {total:,} rows written")
    return written


def _chunks(rows: Iterable[tuple], size: int):
    chunk: list[tuple] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def copy_in_use() -> bool:
    """Whether `rows_insert` uses COPY on the current database (for reports and benchmarks)."""
    connection.ensure_connection()
    return _copy_available()
