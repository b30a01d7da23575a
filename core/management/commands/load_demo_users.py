from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from core.demo import DEMO_USERS, demo_token
from core.models import ApiToken
from core.services import token_issue, user_create_or_update


class Command(BaseCommand):
    help = ("Create the demo users (one per role) and print their passwords and API tokens. A demo user that exists "
            "is left as it is (its password, token and sessions stay valid across restarts of `make run`).")

    def handle(self, *args, **options):
        self.stdout.write("Demo users (local use only; passwords as created):")
        existing = set(get_user_model().objects.filter(username__in=[row[0] for row in DEMO_USERS])
                       .values_list("username", flat=True))
        for username, password, roles, staff in DEMO_USERS:
            key = demo_token(username)
            if username not in existing:
                user, _ = user_create_or_update(username=username, password=password, roles=roles, is_staff=staff)
                token_issue(user=user, key=key)
            elif not ApiToken.objects.filter(user__username=username, digest=ApiToken.digest_of(key)).exists():
                key = "replaced since (/account/token/ issues a new one)"
            role_text = ", ".join(roles) + (" + staff" if staff else "")
            self.stdout.write(f"  {username:<12} password {password:<22} roles: {role_text:<34} token {key}")
