"""Job kinds of the benchmarks app. Each takes a run id, loads the run and hands it to its service. The Loci
Similes evaluation is sharded (`jobs.sharding`; `benchmarks.services.evaluation_shards`), as is the detection
job (`benchmarks.detection_jobs`)."""
from benchmarks.models import PilotRun, SimilarityRun
from benchmarks.services import evaluation_shards, runs, suite_jobs, training
from jobs.registry import job_kind
from jobs.sharding import sharded_job_kind


def benchmark_job_visible(job, user) -> bool:
    """Benchmark runs are shared: every researcher and lead may follow their jobs."""
    from core.roles import LEAD, RESEARCHER, has_role

    return has_role(user, RESEARCHER, LEAD)


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
    return training.training_run_execute(job_id=job.id, progress=job.progress, log=job.log, **params)


@job_kind(suite_jobs.SUITE_KIND, queue="cpu", description="The benchmark suite: a list of methods over every chosen "
          "benchmark, one table with fold spread and paired tests.", visible=benchmark_job_visible)
def benchmark_suite(job, *, methods: list, benchmarks: list) -> dict:
    return suite_jobs.suite_job_execute(job, methods=methods, benchmarks=benchmarks)
