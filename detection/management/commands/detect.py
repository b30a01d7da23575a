"""manage.py detect: thin wrapper around detection.latin.cli.run_detect (no database access)."""
from django.core.management.base import BaseCommand, CommandError

from detection.latin.cli import _parse_params, add_detect_arguments, run_detect
from detection.latin.errors import InputError


class Command(BaseCommand):
    help = "Retrieve the top-k source segments for every query segment (CSV in, CSV out)."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        add_detect_arguments(parser)

    def handle(self, *args, **opts):
        try:
            run_detect(opts["query"], opts["source"], opts["output"], opts["retriever"], opts["top_k"],
                       _parse_params(opts["param"]), opts["jobs"], opts["skip_bad_rows"], opts["cache_dir"],
                       stream=self.stderr, reranker=opts["reranker"],
                       reranker_params=_parse_params(opts["reranker_param"]))
        except (InputError, KeyError) as exc:
            raise CommandError(str(exc)) from exc
