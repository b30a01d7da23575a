"""API tokens with an optional lifetime.

`SIMILIA_TOKEN_TTL_HOURS` (default 0: tokens do not expire). When set, a token older than that is refused
with 401 and a message saying how to get a new one; asking the token endpoint again replaces it.
"""
from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import APIException


def token_expired(token: Token, *, now: dt.datetime | None = None) -> bool:
    hours = settings.SIMILIA_TOKEN_TTL_HOURS
    if not hours:
        return False
    return token.created < (now or timezone.now()) - dt.timedelta(hours=hours)


def token_for(user) -> Token:
    """The user's token, replaced by a fresh one when it has expired."""
    token, _ = Token.objects.get_or_create(user=user)
    if token_expired(token):
        token.delete()
        token = Token.objects.create(user=user)
    return token


class TokenExpired(APIException):
    """401 with `WWW-Authenticate: Token` whatever the first authentication class (DRF would turn an
    AuthenticationFailed into 403 behind session authentication)."""

    status_code = 401
    default_code = "token_expired"
    auth_header = "Token"


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            raise TokenExpired(
                f"Token expired (tokens last {settings.SIMILIA_TOKEN_TTL_HOURS} h): POST your username and "
                "password to /api/v1/auth/token/ for a new one.")
        return user, token
