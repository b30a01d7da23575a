"""manage.py pilot_sweep --verses dbbe_verses_sample.csv --level verse|type --method NAME --output sweep.csv
(no database access)."""
from django.core.management.base import BaseCommand, CommandError

from benchmarks.greek_sts import cli


class Command(BaseCommand):
    help = "DBBE pilot: precision/recall/F1 per similarity threshold at verse or type level."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_sweep_arguments(parser)

    def handle(self, *args, **options):
        try:
            cli.run_sweep(options, stdout=self.stdout, stderr=self.stderr)
        except cli.CommandError as exc:
            raise CommandError(str(exc)) from exc
