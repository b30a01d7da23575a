"""manage.py build_corpus: thin wrapper around detection.latin.cli.run_build_corpus (no database access)."""
from django.core.management.base import BaseCommand, CommandError

from detection.latin.cli import add_build_corpus_arguments, run_build_corpus
from detection.latin.errors import InputError


class Command(BaseCommand):
    help = "Build the Loci Similes query/source corpora from the Tesserae texts and print Table 1."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_build_corpus_arguments(parser)

    def handle(self, *args, **opts):
        try:
            run_build_corpus(opts["texts"], opts["out"], stream=self.stdout)
        except InputError as exc:
            raise CommandError(str(exc)) from exc
