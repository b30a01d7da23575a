"""Gold sets record the annotation project they were made from (reads follow its rules until published).

Existing sets made from a batch are linked to their project by the description the batch→gold-set view
wrote ("annotation project <name>, batch <batch>"); a set whose project cannot be found stays restricted
to researchers and staff until someone publishes it."""
import django.db.models.deletion
from django.db import migrations, models

PREFIX = "annotation project "


def link_source_projects(apps, schema_editor):
    GoldSimilaritySet = apps.get_model("benchmarks", "GoldSimilaritySet")
    Project = apps.get_model("annotation", "Project")
    for gold in GoldSimilaritySet.objects.filter(source="annotation", source_description__startswith=PREFIX):
        name = gold.source_description[len(PREFIX):].rsplit(", batch ", 1)[0]
        project = Project.objects.filter(name=name).first()
        if project is not None:
            gold.source_project_id = project.pk
            gold.save(update_fields=["source_project"])


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0001_initial'),
        ('benchmarks', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='goldsimilarityset',
            name='published',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='goldsimilarityset',
            name='published_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='goldsimilarityset',
            name='source_project',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='gold_sets', to='annotation.project'),
        ),
        migrations.RunPython(link_source_projects, migrations.RunPython.noop),
    ]
