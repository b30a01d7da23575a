"""manage.py pilot_sweep --verses dbbe_verses_sample.csv --level verse|type --method NAME --output sweep.csv
(no database access)."""
from django.core.management.base import BaseCommand

from benchmarks.greek_sts import sts_commands
from core.commands import command_errors


class Command(BaseCommand):
    help = "DBBE pilot: precision/recall/F1 per similarity threshold at verse or type level."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        sts_commands.add_sweep_arguments(parser)

    def handle(self, *args, **options):
        with command_errors():
            sts_commands.sweep_command(options, stdout=self.stdout, stderr=self.stderr)
