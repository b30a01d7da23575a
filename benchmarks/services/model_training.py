"""Training second-stage models on a stored benchmark version: the benchmarks app's side of
`detection.services.training`, which trains and registers the models and never reads a version itself.

`training_run_create` refuses a version the owner may not read (and a model learnt from one) and hands the rest to
`training_job_create`, with the job's reference ``{"version_id": PK}``; `training_run_execute` (the job kind's
handler, `benchmarks.jobs.train_model`) resolves that reference into a `TrainingData`: the version's queries and
sources, its gold merged one class per pair, its stored folds (a user-promoted gold on new queries included) and
its retrievers as first stages.
"""
from __future__ import annotations

from collections.abc import Callable

from benchmarks.models import BenchmarkVersion
from benchmarks.services.runs import _benchmark_from_db, check_models_usable, check_version_readable
from detection.services import training as T
from jobs.models import Job


def training_run_create(*, version: BenchmarkVersion, owner=None, **request) -> Job:
    """Validate a training request on ``version`` and queue its job: the keyword arguments of
    :func:`detection.services.training.training_job_create` (``kind``, ``name``, ``method``, ``base_model``,
    ``params``, ``retriever``, ``retriever_params``, ``k``, ``final_model``, ``enqueue``)."""
    check_version_readable(version, owner)
    return T.training_job_create(data={"version_id": version.pk}, owner=owner, **request,
                                 models_usable=lambda *params, names=(): check_models_usable(owner, *params,
                                                                                             names=names))


def training_data(version: BenchmarkVersion) -> T.TrainingData:
    """What training reads of ``version``, as plain data."""
    from benchmarks.loci import method_adapters as LM
    from benchmarks.loci import splits as S
    from benchmarks.loci.rerank_eval import gold_classes

    bench = _benchmark_from_db(version)
    split = S.stored_split(bench, "db")  # promoted gold on new queries gets a fold too
    return T.TrainingData(bench=bench, split=split, gold=gold_classes(bench),
                          first_stage=lambda config: LM.EngineRetrieverMethod(config.name, config=config),
                          label=f"{version.benchmark.name} v{version.version} ({split.name})")


def training_run_execute(*, job_id: int, version_id: int, progress: Callable, log: Callable, **params) -> dict:
    """The job ``benchmarks.train_model``: train every fold's model on the version (all or nothing)."""
    version = BenchmarkVersion.objects.select_related("benchmark").get(pk=version_id)
    return T.training_job_execute(job_id=job_id, data=training_data(version), progress=progress, log=log, **params)
