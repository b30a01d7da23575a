"""Writes for users and roles."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from rest_framework.authtoken.models import Token

from core.roles import ALL_ROLES


@transaction.atomic
def roles_ensure() -> dict[str, Group]:
    """Create the role groups if missing; returns them by name."""
    return {name: Group.objects.get_or_create(name=name)[0] for name in ALL_ROLES}


@transaction.atomic
def user_create_or_update(
    *, username: str, password: str, roles: tuple[str, ...] = (), is_staff: bool = False, email: str = ""
):
    """Create a user (or reset an existing one's password and roles). Returns (user, token key)."""
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
    token, _ = Token.objects.get_or_create(user=user)
    return user, token.key


@transaction.atomic
def token_renew(*, user) -> Token:
    """Replace the user's API token with a new one: the old key stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)
