"""Throttling of password guesses: the login page, the admin site's login and the API token endpoint.

Only failed attempts count, per client address, in a fixed window: after `limit` wrong passwords from one
address within `window` seconds, further attempts from it get 429 (with Retry-After) until the window ends,
right or wrong. A successful attempt does not reset the count (an attacker who knows one password must not
be able to clear the slate for guessing others). Counts live in Django's cache (set DJANGO_CACHE_URL to a
Redis server in production so that every web process shares them).

The client address is REMOTE_ADDR, or the address `SIMILIA_NUM_PROXIES` proxies back in X-Forwarded-For
(DRF's NUM_PROXIES) when the site runs behind a reverse proxy.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpResponse
from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    """The client's address as DRF's throttles see it (NUM_PROXIES aware)."""
    return BaseThrottle().get_ident(request)


@dataclass(frozen=True)
class FailureLimit:
    scope: str
    limit: int
    window: int  # seconds

    def _key(self, request) -> str:
        return f"similia:failures:{self.scope}:{client_address(request)}"

    def count(self, request) -> int:
        return int(cache.get(self._key(request), 0))

    def blocked(self, request) -> bool:
        return self.count(request) >= self.limit

    def record_failure(self, request) -> None:
        key = self._key(request)
        cache.add(key, 0, timeout=self.window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=self.window)


def login_limit() -> FailureLimit:
    return FailureLimit("login", settings.SIMILIA_LOGIN_FAILURE_LIMIT, settings.SIMILIA_FAILURE_WINDOW)


def token_limit() -> FailureLimit:
    return FailureLimit("token", settings.SIMILIA_TOKEN_FAILURE_LIMIT, settings.SIMILIA_FAILURE_WINDOW)


class TokenFailureThrottle(BaseThrottle):
    """DRF throttle for the token endpoint: refuses a client after too many wrong passwords."""

    def allow_request(self, request, view) -> bool:
        return not token_limit().blocked(request)

    def wait(self) -> float:
        return float(settings.SIMILIA_FAILURE_WINDOW)


def _blocked_message(limit: FailureLimit) -> str:
    return f"Too many failed logins from your address. Try again in {max(1, limit.window // 60)} minutes."


class ThrottledLoginView(auth_views.LoginView):
    """Django's login page, answering 429 after too many wrong passwords from one address."""

    def post(self, request, *args, **kwargs):
        limit = login_limit()
        if limit.blocked(request):
            # The password is not even checked: a blocked client learns nothing from further guesses.
            message = _blocked_message(limit)
            form = self.form_class(request=request)
            response = self.render_to_response(self.get_context_data(form=form, throttled=message), status=429)
            response["Retry-After"] = str(limit.window)
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        login_limit().record_failure(self.request)
        return super().form_invalid(form)


def throttled_admin_login(admin_login):
    """The admin site's login view under the same count as the login page (one "login" scope per address):
    a client locked out of /login/ is locked out of /admin/login/ too, and wrong staff passwords there count."""

    def view(request, *args, **kwargs):
        if request.method != "POST":
            return admin_login(request, *args, **kwargs)
        limit = login_limit()
        if limit.blocked(request):
            response = HttpResponse(_blocked_message(limit), status=429, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = str(limit.window)
            return response
        response = admin_login(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: the credentials were refused
            login_limit().record_failure(request)
        return response

    return view
