"""manage.py build_corpus: thin wrapper around detection.commands.run_build_corpus (no database access)."""
from django.core.management.base import BaseCommand

from core.commands import command_errors
from detection.commands import add_build_corpus_arguments, run_build_corpus


class Command(BaseCommand):
    help = "Build the Loci Similes query/source corpora from the Tesserae texts and print Table 1."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_build_corpus_arguments(parser)

    def handle(self, *args, **opts):
        with command_errors():
            run_build_corpus(texts=opts["texts"], out=opts["out"], stream=self.stdout)
