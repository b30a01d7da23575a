"""API tokens with an optional lifetime.

`SIMILIA_TOKEN_TTL_HOURS` (default 720; 0: tokens do not expire). When set, a token older than that is refused
with 401 and a message saying how to get a new one; asking the token endpoint again replaces it. A key is looked
up by its SHA-256 digest (`core.models.ApiToken`: no key is stored).

A token request costs one SQL statement before the view runs: the token, its user and the user's roles
(`core.roles`) are read together, where DRF's TokenAuthentication read the token with its user and the role
check read the groups in a second statement (and building both through the ORM cost more CPU than the rest
of an annotator's submit). A session request likewise reads its user with the roles (`UserWithRolesBackend`).
"""
from __future__ import annotations

import datetime as dt
import functools

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed

from core import rawsql
from core.models import ApiToken
from core.roles import ALL_ROLES, remember_roles


def token_expired(token: ApiToken, *, now: dt.datetime | None = None) -> bool:
    hours = settings.SIMILIA_TOKEN_TTL_HOURS
    if not hours:
        return False
    return token.created < (now or timezone.now()) - dt.timedelta(hours=hours)


class TokenExpired(APIException):
    """401 with `WWW-Authenticate: Token` whatever the first authentication class (DRF would turn an
    AuthenticationFailed into 403 behind session authentication)."""

    status_code = 401
    default_code = "token_expired"
    auth_header = "Token"


@functools.cache
def _user_sql(by_token: bool) -> str:
    """One row per role the user holds (at least one): (the token's `created`,) the user's columns, a role name;
    the user found by token digest or by id."""
    user_model = get_user_model()
    q = connection.ops.quote_name
    groups_through = user_model._meta.get_field("groups").remote_field.through
    pk = q(user_model._meta.pk.column)
    source = (f"{q(ApiToken._meta.db_table)} t JOIN {q(user_model._meta.db_table)} u ON u.{pk} = t.{q('user_id')}"
              if by_token else f"{q(user_model._meta.db_table)} u")
    return (f"SELECT {'t.' + q('created') + ', ' if by_token else ''}{rawsql.columns(user_model, 'u')}, r.name "
            f"FROM {source} "
            f"LEFT JOIN (SELECT ug.{q('user_id')} AS user_id, g.{q('name')} AS name "
            f"FROM {q(groups_through._meta.db_table)} ug JOIN {q(Group._meta.db_table)} g ON g.{q('id')} = ug.{q('group_id')} "
            f"WHERE g.{q('name')} IN ({', '.join(['%s'] * len(ALL_ROLES))})) r ON r.user_id = u.{pk} "
            f"WHERE {'t.' + q('digest') if by_token else 'u.' + pk} = %s")


def _user_rows(by_token: bool, value) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(_user_sql(by_token), [*ALL_ROLES, value])
        return cursor.fetchall()


def _user_of(rows: list[tuple], first: int):
    """The user of `_user_sql`'s rows (its columns from `first`), with its roles cached (`core.roles`)."""
    user = rawsql.instance(get_user_model(), rows[0][first:-1])
    remember_roles(user, [row[-1] for row in rows if row[-1] is not None])
    return user


def token_user(key: str):
    """(user, token) for an API key, with the user's roles cached on the user (`core.roles`), or None.
    One statement."""
    digest = ApiToken.digest_of(key)
    rows = _user_rows(True, digest)
    if not rows:
        return None
    user = _user_of(rows, 1)
    token = ApiToken(digest=digest, hint=key[:ApiToken.HINT_LENGTH], user=user,
                     created=rawsql.convert_value(rows[0][0], ApiToken._meta.get_field("created")))
    token._state.adding, token._state.db = False, connection.alias
    return user, token


def user_with_roles(user_id):
    """The user with this primary key (as a session stores it), its roles cached on it (`core.roles`), or None.
    One statement."""
    user_model = get_user_model()
    try:
        user_id = user_model._meta.pk.to_python(user_id)
    except ValidationError:
        return None
    if user_id is None or not rawsql.id_in_range(user_model, user_id):
        return None
    rows = _user_rows(False, user_id)
    return _user_of(rows, 0) if rows else None


class UserWithRolesBackend(ModelBackend):
    """Django's ModelBackend, but the user of a session (every page and every request of the annotator page) is
    read with its roles in one statement, where ModelBackend read the user and the role check the groups.

    Listed first in AUTHENTICATION_BACKENDS, so logins record it in the session; ModelBackend stays listed after
    it only for sessions recorded before (Django refuses a session whose backend is no longer listed). A login
    it refuses stops there (PermissionDenied: `authenticate` then fails at once) instead of ModelBackend checking
    the same password again."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None and password is not None and (username or kwargs.get(get_user_model().USERNAME_FIELD)):
            raise PermissionDenied  # a username and password it checked and refused; other credentials: not ours
        return user

    def get_user(self, user_id):
        user = user_with_roles(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        found = token_user(key)
        if found is None:
            raise AuthenticationFailed(_("Invalid token."))
        user, token = found
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(token):
            raise TokenExpired(
                f"Token expired (tokens last {settings.SIMILIA_TOKEN_TTL_HOURS} h): POST your username and "
                "password to /api/v1/auth/token/ for a new one.")
        return user, token
