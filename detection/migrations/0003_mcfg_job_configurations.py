"""Detection and training job rows queued before jobs carried their methods' configurations (a method's name with
its user parameters) are converted once, here, to ``MethodConfig.to_json()``: the workers read only that shape. An
unfinished row whose parameters no longer configure (a parameter since removed, a range since narrowed) fails with
the registry's reason; a finished one keeps what it stored."""
from django.db import migrations
from django.utils import timezone

DETECT, TRAIN = "benchmarks.detect", "benchmarks.train_model"
FINISHED = ("succeeded", "failed", "cancelled")


def _named(configure):
    """``configure`` whose refusal names the method and its kind."""
    def configured(name, params, *, kind):
        try:
            return configure(name, params, kind=kind)
        except (ValueError, KeyError) as exc:  # ParamError is a ValueError, UnknownMethod a KeyError
            raise ValueError(f"its {kind} {str(name)[:60]!r}: {exc.args[0] if exc.args else exc}") from None
    return configured


def _detect(params: dict, configure) -> dict:
    reranker = params.pop("reranker", None)
    rr_params = params.pop("reranker_params", None) or {}
    params["method"] = configure(params["method"], params.pop("params", None) or {}, kind="retriever").to_json()
    params["reranker"] = configure(reranker, rr_params, kind="reranker").to_json() if reranker else None
    return params


def _train(params: dict, configure) -> dict:
    method, values = params.pop("method", None) or "", params.pop("params", None) or {}
    feature = params.get("kind") == "feature-classifier"
    params["retriever"] = configure(params["retriever"], params.pop("retriever_params", None) or {},
                                    kind="retriever").to_json()
    params["reranker"] = configure(method, values, kind="reranker").to_json() if feature else None
    params["options"] = None if feature else dict(values)
    return params


CONVERT = {DETECT: (_detect, "method"), TRAIN: (_train, "retriever")}


def convert_old_jobs(apps, schema_editor):
    from detection.methods.registry import configure

    for job in apps.get_model("jobs", "Job").objects.filter(kind__in=list(CONVERT)).iterator():
        convert, key = CONVERT[job.kind]
        if not isinstance((job.params or {}).get(key), str):
            continue  # already carries its configurations
        try:
            job.params = convert(dict(job.params), _named(configure))
        except (ValueError, KeyError) as exc:
            if job.status in FINISHED:
                continue
            job.status, job.finished = "failed", timezone.now()
            job.error = (f"this job was queued before jobs carried their methods' configurations, and what it "
                         f"stored no longer configures ({exc.args[0] if exc.args else exc}): queue it again")
        job.save()


class Migration(migrations.Migration):

    dependencies = [
        ("detection", "0002_trainedmodel_method_config_digest"),
        ("jobs", "0004_job_error_detail"),
    ]

    operations = [migrations.RunPython(convert_old_jobs, migrations.RunPython.noop)]
