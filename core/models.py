"""API tokens, kept hashed: a key is shown once, when it is issued (`core.services.token_issue`)."""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.utils import timezone


class ApiToken(models.Model):
    """A user's API key (`Authorization: Token <key>`), stored only as its SHA-256 digest (the key holds 160
    random bits, so no salt or slow hash is needed; looked up by digest, so the lookup's timing tells nothing about a
    key); `hint`, its first characters, lets the owner recognise it."""

    HINT_LENGTH = 6

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token")
    digest = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=HINT_LENGTH)
    created = models.DateTimeField(default=timezone.now)

    @staticmethod
    def digest_of(key: str) -> str:
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
