"""Production: every secret from the environment, no defaults for them; HTTPS only.

`manage.py check --deploy` is clean with the values of docker/env.example (tests/core/test_settings.py).
For a trial over plain HTTP set DJANGO_SSL_REDIRECT=false, DJANGO_SECURE_COOKIES=false, DJANGO_HSTS_SECONDS=0.
"""
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_db, env_int, env_str

from .base import *  # noqa: F403

SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5 or SECRET_KEY.startswith("django-insecure"):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be at least 50 characters with at least 5 different ones; generate one with "
        "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'.")
DATABASES = {"default": env_db("DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DJANGO_CONN_MAX_AGE", 60, minimum=0)

SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's own health check speaks plain HTTP
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# drf-spectacular's schema build is checked by the test suite (tests/core/test_schema_and_pages.py); as a
# deploy check it would query the database and repeat schema-naming notes that are not deployment issues.
SPECTACULAR_SETTINGS = {**SPECTACULAR_SETTINGS, "ENABLE_DJANGO_DEPLOY_CHECK": False}  # noqa: F405
