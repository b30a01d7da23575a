"""Runs keep one configuration: a row still without one gets its method and the params it stored (what it ran,
not validated again) before the params columns go; the method names stay, set from the configuration on save.
Suite job rows queued before jobs carried configurations (method strings) are configured once, here: an
unfinished one that no longer configures fails with the reason; a finished one keeps what it stored."""
from django.db import migrations
from django.utils import timezone

from detection.methods.specs import stored_json

_FIELDS = {"evaluationrun": [("config", "method", "params", "retriever"),
                             ("reranker_config", "reranker", "reranker_params", "reranker")],
           "similarityrun": [("config", "method", "params", "pair_scorer")],
           "pilotrun": [("config", "method", "params", "pair_scorer")]}


def fill_configs(apps, schema_editor):
    for model_name, fields in _FIELDS.items():
        for run in apps.get_model("benchmarks", model_name).objects.all().iterator():
            missing = [(f, n, p, k) for f, n, p, k in fields if getattr(run, f) is None and getattr(run, n)]
            for field, name, params, kind in missing:
                setattr(run, field, stored_json(getattr(run, name), kind, getattr(run, params) or {}))
            if missing:
                run.save(update_fields=[f for f, *_ in missing])


def _configured(method: str) -> dict:
    from benchmarks.suite.suite import configure_method

    if method.strip().startswith("file:"):  # a job never reads a path it was handed
        raise ValueError("a suite job never reads another tool's file: score it from the command line")
    return configure_method(method).to_json()


def convert_suite_jobs(apps, schema_editor):
    for job in apps.get_model("jobs", "Job").objects.filter(kind="benchmarks.suite").iterator():
        methods = (job.params or {}).get("methods") or []
        if not any(isinstance(m, str) for m in methods):
            continue
        converted = []
        for method in methods:
            try:
                converted.append(_configured(method) if isinstance(method, str) else method)
            except (ValueError, KeyError) as exc:  # ParamError is a ValueError, UnknownMethod a KeyError
                if job.status not in ("succeeded", "failed", "cancelled"):
                    job.status, job.finished = "failed", timezone.now()
                    job.error = (f"this job was queued before jobs carried their methods' configurations, and its "
                                 f"method {method[:60]!r} no longer configures ({exc}): queue it again")
                    job.save()
                break
        else:
            job.params = {**job.params, "methods": converted}
            job.save()


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0006_evaluationrun_ranked_list'),
        ('jobs', '0004_job_error_detail'),
    ]

    operations = [
        migrations.RunPython(fill_configs, migrations.RunPython.noop),
        migrations.RunPython(convert_suite_jobs, migrations.RunPython.noop),
        migrations.RemoveField(model_name='evaluationrun', name='params'),
        migrations.RemoveField(model_name='evaluationrun', name='reranker_params'),
        migrations.RemoveField(model_name='pilotrun', name='params'),
        migrations.RemoveField(model_name='similarityrun', name='params'),
    ]
