from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Similia core (roles)"

    def ready(self):
        from core import token_revocation  # noqa: F401  (a password change revokes the user's API token)
