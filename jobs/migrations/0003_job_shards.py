from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):

    dependencies = [
        ('jobs', '0002_job_delivery'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='parent',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name='shards', to='jobs.job'),
        ),
        migrations.AddField(
            model_name='job',
            name='shard_index',
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
