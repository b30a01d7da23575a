"""Writes for users and roles."""
from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from core.models import ApiToken
from core.roles import ALL_ROLES


@transaction.atomic
def roles_ensure() -> dict[str, Group]:
    """Create the role groups if missing; returns them by name."""
    return {name: Group.objects.get_or_create(name=name)[0] for name in ALL_ROLES}


@transaction.atomic
def user_create_or_update(
    *, username: str, password: str, roles: tuple[str, ...] = (), is_staff: bool = False, email: str = ""
):
    """Create a user (or reset an existing one's password and roles) with a new API token. Returns (user, token
    key): the key is not stored, only its digest."""
    groups = roles_ensure()
    unknown = set(roles) - set(ALL_ROLES)
    if unknown:
        raise ValueError(f"Unknown role(s): {', '.join(sorted(unknown))}; known: {', '.join(ALL_ROLES)}")
    user, _ = get_user_model().objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    user.is_staff = is_staff
    user.is_superuser = is_staff
    user.save()
    user.groups.set([groups[name] for name in roles])
    return user, token_issue(user=user)


@transaction.atomic
def token_issue(*, user, key: str | None = None) -> str:
    """Replace the user's API token with a new one (the old key stops working at once) and return its key, which
    is shown once: only its SHA-256 digest is stored. `key`: a given key (the demo's, `core.demo`), else random."""
    key = key or secrets.token_hex(20)
    with transaction.atomic():  # two issues at once for one user queue on the user's row: one token stays
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        ApiToken.objects.filter(user=user).delete()
        ApiToken.objects.create(user=user, digest=ApiToken.digest_of(key), hint=key[:ApiToken.HINT_LENGTH])
    return key
