"""``manage.py evaluate_retrieval``: evaluate a retriever on plain files, no database (see
:mod:`benchmarks.loci.cli`)."""
from django.core.management.base import BaseCommand

from benchmarks.loci import cli


class Command(BaseCommand):
    help = ("Evaluate a retriever on query/source/gold CSV files (Recall@k, MRR@k per fold and type); "
            "writes a JSON report.")
    requires_system_checks = []

    def add_arguments(self, parser):
        cli.add_evaluate_retrieval_arguments(parser)

    def handle(self, *args, **o):
        cli.run_evaluate_retrieval(queries=o["queries"], sources=o["sources"], gold=o["gold"],
                                   retriever=o["retriever"], k=o["k"], output=o["output"], split=o["split"],
                                   folds=o["folds"], seed=o["seed"], pool=o["pool"], ties=o["ties"],
                                   csv=o["csv"], svg=o["svg"], stdout=self.stdout)
