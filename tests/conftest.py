"""Fixtures shared by the whole suite: users per role and API clients."""
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROLE_NAMES = ("annotator", "lead", "researcher")


@pytest.fixture
def make_user(db):
    from core.services import user_create_or_update

    def make(username: str, *roles: str, staff: bool = False):
        user, _ = user_create_or_update(username=username, password="pw-" + username, roles=roles, is_staff=staff)
        return user

    return make


@pytest.fixture
def users(make_user):
    """One user per role, plus a user with no role and a staff user."""
    return {
        "annotator": make_user("ann", "annotator"),
        "lead": make_user("lea", "lead"),
        "researcher": make_user("res", "researcher"),
        "norole": make_user("nobody"),
        "staff": make_user("staff", staff=True),
    }


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def client_for(users):
    """APIClient authenticated with the user's token (`None` role gives an anonymous client)."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(role):
        client = APIClient()
        if role is not None:
            user = users[role] if isinstance(role, str) else role
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
        return client

    return make


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache (login/token failure counts live there)."""
    from django.core.cache import cache

    cache.clear()
    yield
