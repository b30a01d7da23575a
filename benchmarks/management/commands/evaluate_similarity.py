"""manage.py evaluate_similarity --gold STS.tsv --method NAME --output report.json  (no database access)."""
from django.core.management.base import BaseCommand

from benchmarks.greek_sts import sts_commands
from core.commands import command_errors


class Command(BaseCommand):
    help = "Score a verse-similarity method on a graded gold TSV (RMSE, Spearman, Pearson, per reference)."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        sts_commands.add_evaluate_arguments(parser)

    def handle(self, *args, **options):
        with command_errors():
            sts_commands.evaluate_command(options, stdout=self.stdout, stderr=self.stderr)
