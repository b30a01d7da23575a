from django.core.management.base import BaseCommand

from core.demo import DEMO_USERS
from core.services import user_create_or_update


class Command(BaseCommand):
    help = "Create the demo users (one per role) and print their passwords and API tokens."

    def handle(self, *args, **options):
        self.stdout.write("Demo users (local use only):")
        for username, password, roles, staff in DEMO_USERS:
            _, token = user_create_or_update(username=username, password=password, roles=roles, is_staff=staff)
            role_text = ", ".join(roles) + (" + staff" if staff else "")
            self.stdout.write(f"  {username:<12} password {password:<22} roles: {role_text:<34} token {token}")
