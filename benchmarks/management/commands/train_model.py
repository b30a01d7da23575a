"""``manage.py train_model``: train a reranker (or a neural model) on a stored benchmark version in one command.

The same validation as ``POST /api/v1/.../train`` (``benchmarks.services.model_training.training_run_create``), the
same job (``benchmarks.train_model``) run in-process with its progress and log lines printed on the terminal.
The candidates come from the version's whole source corpus (``load_benchmarks`` with a corpus attached) unless
the version holds only the gold sources. Prints the stored model's name and its held-out figures.
"""
from django.core.management.base import BaseCommand, CommandError

from benchmarks.selectors import benchmark_version_named
from benchmarks.services.model_training import training_run_create
from core.cli import parse_params
from core.commands import command_errors
from core.run_limits import TRAINING_K
from detection.methods import DEFAULT_RETRIEVER
from detection.services.training import FEATURE_METHODS, KINDS
from jobs.models import Job
from jobs.runner import run_job


class Command(BaseCommand):
    help = "Train a reranker on a stored benchmark (one model per fold and one on all folds), with progress."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark name, e.g. loci-similes-545")
        parser.add_argument("--benchmark-version", dest="bversion", default=None, help="version (default: latest)")
        parser.add_argument("--name", required=True, help="the model's name in the models directory")
        parser.add_argument("--kind", default="feature-classifier", choices=KINDS)
        parser.add_argument("--method", default="feature-ltr", help=f"one of {', '.join(FEATURE_METHODS)} "
                            "for a feature classifier (default: feature-ltr, learning to rank)")
        parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="model parameter")
        parser.add_argument("--base-model", default="", help="neural kinds: the model to fine-tune")
        parser.add_argument("--retriever", default=DEFAULT_RETRIEVER,
                            help=f"the first stage the reranker learns from (default {DEFAULT_RETRIEVER}, the detector's)")
        parser.add_argument("--retriever-param", action="append", default=[], metavar="KEY=VALUE")
        TRAINING_K.add_option(parser, "--k")
        parser.add_argument("--no-final-model", action="store_true", help="per-fold models only (no NAME/all)")

    def handle(self, *args, **o):
        version = benchmark_version_named(o["benchmark"], o["bversion"])
        if version is None:
            raise CommandError(f"no benchmark {o['benchmark']!r} in the database (load it with manage.py "
                               "load_benchmarks or load_demo)")
        with command_errors():
            params, rparams = parse_params(o["param"]), parse_params(o["retriever_param"])
        with command_errors():  # TrainingError or the registry's ParamError, as the page and the API show them
            job = training_run_create(version=version, kind=o["kind"], name=o["name"], method=o["method"],
                                      base_model=o["base_model"], params=params, retriever=o["retriever"],
                                      retriever_params=rparams, k=o["k"],
                                      final_model=False if o["no_final_model"] else None, enqueue=False)
        self.stderr.write(f"job {job.pk}: training {o['method'] or o['kind']} {o['name']!r} on {version} "
                          f"(first stage {o['retriever']}, top {o['k']})")
        state = run_job(job.pk, worker="manage.py train_model", echo=lambda line: self.stderr.write(line))
        job = Job.objects.get(pk=job.pk)
        if state != "succeeded":
            raise CommandError(f"job {job.pk} {state}: {job.error.splitlines()[0] if job.error else ''}")
        result = job.result or {}
        self.stdout.write(f"model {o['name']} stored: {', '.join(result.get('models', [])) or result}")
