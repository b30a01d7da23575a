from django.core.management import call_command
from django.core.management.base import BaseCommand

from core.demo_loaders import run_demo_loaders


class Command(BaseCommand):
    help = "Load the demo: users (printed with passwords) and every app's demo data (idempotent)."

    def handle(self, *args, **options):
        call_command("load_demo_users", stdout=self.stdout)
        for name, summary in run_demo_loaders():
            self.stdout.write(f"{name}: {summary}")
