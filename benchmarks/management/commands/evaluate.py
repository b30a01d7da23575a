"""``manage.py evaluate``: evaluate a retriever on a stored Loci Similes benchmark, in-process.

Creates the EvaluationRun and its Job row, runs the job function through `jobs.runner.run_job` (so the row
ends succeeded or failed exactly as from a worker) and writes the report JSON.
"""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.exports import loci_report
from benchmarks.models import EvaluationRun
from benchmarks.selectors import benchmark_version_named
from benchmarks.services import evaluation_run_create
from benchmarks.suite.suite import split_methods
from core.cli import add_method_arguments, parse_ks, parse_params
from core.commands import command_errors
from core.run_limits import EVALUATION_N_FOLDS, EVALUATION_UNIT
from detection.methods import registry
from jobs.runner import run_job


class Command(BaseCommand):
    help = "Evaluate a retrieval method on a stored benchmark (DB-backed; creates a run and a job) and write the report."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", help="benchmark name, e.g. loci-similes-545 (required)")
        parser.add_argument("--benchmark-version", dest="bversion", default=None, help="version (default: the latest)")
        add_method_arguments(parser, default="", what="retriever")  # required unless --suite (checked below)
        parser.add_argument("--reranker", default="", help="'lexical-rule' or empty for retrieval only")
        parser.add_argument("--ks", default="1,5,10,20,50,100", help="comma-separated cut-offs")
        parser.add_argument("--split", default="file", choices=EvaluationRun.Split.values)
        EVALUATION_N_FOLDS.add_option(parser, "--folds")
        EVALUATION_UNIT.add_option(parser, "--unit")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--pool", default="gold", choices=["gold", "corpus"],
                            help="rank against the cited sources only (gold) or the version's whole source corpus")
        parser.add_argument("--output", default=None, help="report JSON path (default: stdout)")
        parser.add_argument("--suite", action="store_true",
                            help="run a list of methods over every registered benchmark and print one table "
                                 "(benchmarks.suite; --methods, --benchmarks, --corpus-dir, --markdown, --expected)")
        parser.add_argument("--methods", default=None, help="--suite: comma-separated method strings")
        parser.add_argument("--benchmarks", default=None, help="--suite: comma-separated benchmark names "
                            "(loci-similes, lucan-vergil, stored:NAME@VERSION for a stored version)")
        parser.add_argument("--corpus-dir", default=None, help="--suite: Loci Similes against this whole corpus")
        parser.add_argument("--markdown", default=None, help="--suite: also write the table here")
        parser.add_argument("--expected", default=None,
                            help="--suite: re-run a perf/expected/*.yaml file and fail when a figure drifted")
        parser.add_argument("--write-expected", default=None, help="--suite: store the figures as an expected file")
        parser.add_argument("--export", default=None,
                            help="--suite: folder for qrels, BEIR folders (all and per fold) and TREC runs")

    def handle(self, *args, **o):
        if o["suite"]:
            from benchmarks.services.suite_jobs import stored_suite_benchmark
            from benchmarks.suite.suite_commands import run_suite_command

            with command_errors():
                rc = run_suite_command(
                    methods=split_methods(o["methods"]) if o["methods"] else None,
                    benchmarks=o["benchmarks"].split(",") if o["benchmarks"] else None, corpus_dir=o["corpus_dir"],
                    output=o["output"], markdown=o["markdown"], expected=o["expected"],
                    write_expected=o["write_expected"], export=o["export"], stdout=self.stdout, stderr=self.stderr,
                    stored=stored_suite_benchmark)
            if rc:
                raise CommandError("the expected figures drifted (see the DRIFT lines)")
            return
        if o["method"] == "list":
            self.stdout.write(registry.format_specs(kind="retriever", language="la"), ending="")
            return
        if not o["method"]:
            raise CommandError("--method is required (or --suite; --method list prints the retrievers)")
        if not o["benchmark"]:
            raise CommandError("--benchmark is required (--method list prints the retrievers)")
        with command_errors():
            params, ks = parse_params(o["param"]), list(parse_ks(o["ks"]))
        version = benchmark_version_named(o["benchmark"], o["bversion"])
        if version is None:
            raise CommandError(f"no benchmark {o['benchmark']!r}{' version ' + o['bversion'] if o['bversion'] else ''}"
                               " in the database (load it with manage.py load_demo)")
        with command_errors():  # RunError or the registry's ParamError: the message the page and the API show
            run = evaluation_run_create(version=version, method=o["method"], params=params, reranker=o["reranker"],
                                        ks=ks, split=o["split"], n_folds=o["folds"], seed=o["seed"], pool=o["pool"],
                                        unit=o["unit"], shards=1, enqueue=False)
        self.stderr.write(f"run {run.pk}, job {run.job_id}: evaluating {run.method} on {version}")
        state = run_job(run.job_id, worker="manage.py evaluate")
        run.refresh_from_db()
        if state != "succeeded":
            raise CommandError(f"job {run.job_id} {state}: {run.job.error.splitlines()[0] if run.job.error else ''}")
        text = json.dumps(loci_report(run), indent=2, ensure_ascii=False)
        if o["output"]:
            Path(o["output"]).write_text(text, encoding="utf-8")
            summary = ", ".join(f"{k} {v:.3f}" for k, v in run.summary.items() if v is not None and "@" in k
                                and not k.startswith(("cit", "cf")))
            self.stdout.write(f"run {run.pk}: {summary}; report written to {o['output']}")
        else:
            self.stdout.write(text)
