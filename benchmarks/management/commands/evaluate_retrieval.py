"""``manage.py evaluate_retrieval``: evaluate a retriever on plain files, no database (see
:mod:`benchmarks.loci.loci_commands`)."""
from django.core.management.base import BaseCommand

from benchmarks.loci import loci_commands
from core.commands import command_errors


class Command(BaseCommand):
    help = ("Evaluate a retriever on query/source/gold CSV files (Recall@k, MRR@k per fold and type); "
            "writes a JSON report. --method list lists the retrievers.")
    requires_system_checks = []

    def add_arguments(self, parser):
        loci_commands.add_evaluate_retrieval_arguments(parser)

    def handle(self, *args, **options):
        with command_errors():
            loci_commands.evaluate_retrieval_command(options, stdout=self.stdout)
