"""Django's database sessions, read by one plain statement (`SESSION_ENGINE = "core.sessions"`).

The same table and the same encoding as `django.contrib.sessions.backends.db`, so sessions stored by either are
read by both; only the read of a session, which every logged-in request makes (the annotator page sends each
choice with its session), skips the ORM: building that statement cost more CPU than the rest of reading the
session (`core/rawsql.py` says why). Writes (login, logout, a changed session) stay Django's."""
from __future__ import annotations

import functools

from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone


@functools.cache
def _read_sql() -> str:
    from django.contrib.sessions.models import Session

    q = connection.ops.quote_name
    return (f"SELECT {q('session_data')} FROM {q(Session._meta.db_table)} "
            f"WHERE {q('session_key')} = %s AND {q('expire_date')} > %s")


class SessionStore(db.SessionStore):
    def load(self):
        expire = self.model._meta.get_field("expire_date").get_db_prep_value(timezone.now(), connection)
        with connection.cursor() as cursor:
            cursor.execute(_read_sql(), [self.session_key, expire])
            row = cursor.fetchone()
        if row is None:  # none, or expired: as the database backend, forget the key (a new one is made on save)
            self._session_key = None
            return {}
        return self.decode(row[0])
