"""Production: every secret from the environment, no defaults for them."""
from config.env import env_bool, env_db, env_int, env_str

from .base import *  # noqa: F403

SECRET_KEY = env_str("DJANGO_SECRET_KEY")
DATABASES = {"default": env_db("DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DJANGO_CONN_MAX_AGE", 60, minimum=0)

SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
