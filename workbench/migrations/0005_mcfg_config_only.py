"""Detection runs keep one configuration per method: a row still without one gets what it named and the params it
stored (what it ran, not validated again) before the params columns go; the names stay, set from the
configurations on save."""
from django.db import migrations

from detection.methods.specs import stored_json


def fill_configs(apps, schema_editor):
    for run in apps.get_model("workbench", "DetectionRun").objects.all().iterator():
        fields = []
        if run.retriever_config is None and run.retriever:
            run.retriever_config = stored_json(run.retriever, "retriever", run.retriever_params or {})
            fields.append("retriever_config")
        if run.reranker_config is None and run.reranker:
            run.reranker_config = stored_json(run.reranker, "reranker", run.reranker_params or {})
            fields.append("reranker_config")
        if fields:
            run.save(update_fields=fields)


class Migration(migrations.Migration):

    dependencies = [
        ('workbench', '0004_detectionrun_method_config_digest'),
    ]

    operations = [
        migrations.RunPython(fill_configs, migrations.RunPython.noop),
        migrations.RemoveField(model_name='detectionrun', name='reranker_params'),
        migrations.RemoveField(model_name='detectionrun', name='retriever_params'),
    ]
