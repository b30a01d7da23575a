"""Job kinds of the benchmarks app. Each takes a run id, loads the run and hands it to its service."""
from benchmarks.models import EvaluationRun, PilotRun, SimilarityRun
from benchmarks.services import runs, training
from jobs.registry import job_kind


def benchmark_job_visible(job, user) -> bool:
    """Benchmark runs are shared: every researcher and lead may follow their jobs."""
    from core.roles import LEAD, RESEARCHER, has_role

    return has_role(user, RESEARCHER, LEAD)


@job_kind(runs.LOCI_KIND, queue="cpu", description="Evaluate a retrieval method on a Loci Similes version.",
          visible=benchmark_job_visible)
def loci_evaluate(job, *, run_id: int) -> dict:
    run = EvaluationRun.objects.select_related("version__benchmark").get(pk=run_id)
    return runs.evaluation_run_execute(run=run, progress=job.progress, log=job.log)


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
