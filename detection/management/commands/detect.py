"""manage.py detect: thin wrapper around detection.commands.detect_command (no database access)."""
from django.core.management.base import BaseCommand

from core.commands import command_errors
from detection.commands import add_detect_arguments, detect_command


class Command(BaseCommand):
    help = "Retrieve the top-k source segments for every query segment (CSV in, CSV out); --method list lists them."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_detect_arguments(parser)

    def handle(self, *args, **opts):
        with command_errors():
            detect_command(opts, stdout=self.stdout, stderr=self.stderr)
