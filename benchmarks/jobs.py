"""Job kinds of the benchmarks app. Each takes a run id, loads the run and hands it to its service. The Loci
Similes evaluation is sharded (`jobs.sharding`; `benchmarks.services.evaluation_shards`), as is the detection
job (`detection.detection_jobs`), which reads a stored corpus as the segment set ``corpus`` registered here.
Training (``benchmarks.train_model``) reads a version through `benchmarks.services.model_training`, which hands
its queries, sources, gold and folds to `detection.services.training`."""
from benchmarks import selectors
from benchmarks.models import Corpus, PilotRun, SimilarityRun
from benchmarks.services import evaluation_shards, model_training, runs, suite_jobs
from detection.detection_jobs import SegmentSet, register_segment_set
from detection.services import training
from jobs.registry import job_kind
from jobs.sharding import sharded_job_kind


def _corpus_rows(pk: int) -> list[tuple[str, str]]:
    return list(selectors.segments_of(corpus_id=pk).values_list("seg_id", "text"))


def _corpus_count(pk: int) -> int:
    return selectors.segments_of(corpus_id=pk).count()


def _corpus_fingerprint(pk: int) -> tuple:
    """What tells a corpus apart from an earlier state of it: id, creation time, segment count, last id."""
    from django.db.models import Count, Max

    row = Corpus.objects.filter(pk=pk).annotate(n=Count("segments"), last=Max("segments__id")).values_list(
        "created", "n", "last").first()
    return ("corpus", pk, *(row or ()))


register_segment_set("corpus", SegmentSet(_corpus_rows, _corpus_count, _corpus_fingerprint))


def benchmark_job_visible(job, user) -> bool:
    """Benchmark runs are shared: every researcher and lead may follow their jobs, except a job about something
    hidden from them (another user's version awaiting approval, a model learnt from one: its owner's and the
    leads', as the version is)."""
    from core.roles import LEAD, RESEARCHER, has_role

    return has_role(user, RESEARCHER, LEAD) and not selectors.HiddenFromUser(user).hides(job)


@sharded_job_kind(runs.LOCI_KIND, plan=evaluation_shards.evaluation_plan, merge=evaluation_shards.evaluation_merge,
                  queue="cpu", description="Evaluate a retrieval method on a Loci Similes version (its held-out "
                  "queries ranked in shards over the workers).", visible=benchmark_job_visible)
def loci_evaluate(job, **params) -> dict:
    return evaluation_shards.evaluation_shard(job, **params)


@job_kind(runs.STS_KIND, queue="cpu", description="Evaluate a similarity method on a graded gold set.",
          visible=benchmark_job_visible)
def sts_evaluate(job, *, run_id: int) -> dict:
    run = SimilarityRun.objects.select_related("gold_set").get(pk=run_id)
    return runs.similarity_run_execute(run=run, progress=job.progress, log=job.log)


@job_kind(runs.PILOT_KIND, queue="cpu", description="DBBE pilot: P/R/F1 of a similarity threshold sweep.",
          visible=benchmark_job_visible)
def pilot_sweep(job, *, run_id: int) -> dict:
    run = PilotRun.objects.get(pk=run_id)
    return runs.pilot_run_execute(run=run, progress=job.progress, log=job.log)


@job_kind(training.TRAIN_KIND, queue="gpu", description="Train a second-stage model per fold (never on its held-out "
          "fold) and register it.", visible=benchmark_job_visible)
def train_model(job, **params) -> dict:
    return model_training.training_run_execute(job_id=job.id, progress=job.progress, log=job.log, **params)


@job_kind(suite_jobs.SUITE_KIND, queue="cpu", description="The benchmark suite: a list of methods over every chosen "
          "benchmark, one table with fold spread and paired tests.", visible=benchmark_job_visible)
def benchmark_suite(job, *, methods: list, benchmarks: list) -> dict:
    return suite_jobs.suite_job_execute(job, methods=methods, benchmarks=benchmarks)
