"""API tokens kept hashed: every plain key of DRF's old token table becomes its SHA-256 digest here, and the old
table (rest_framework.authtoken, no longer installed) is dropped with its migration records."""
import datetime as dt
import hashlib

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


OLD_TABLE = "authtoken_token"


def hash_plain_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {q('key')}, {q('user_id')}, {q('created')} FROM {q(OLD_TABLE)}")
        rows = cursor.fetchall()
    api_token = apps.get_model("core", "ApiToken")
    api_token.objects.bulk_create([
        api_token(digest=hashlib.sha256(key.encode()).hexdigest(), hint=key[:6], user_id=user_id,
                  created=_aware(created)) for key, user_id, created in rows])
    schema_editor.execute(f"DROP TABLE {q(OLD_TABLE)}")
    schema_editor.execute(f"DELETE FROM {q('django_migrations')} WHERE {q('app')} = %s", ["authtoken"])


def _aware(value) -> dt.datetime:
    """A `created` as the raw cursor gives it (SQLite: text in UTC; PostgreSQL: an aware datetime)."""
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('digest', models.CharField(max_length=64, unique=True)),
                ('hint', models.CharField(max_length=6)),
                ('created', models.DateTimeField(default=django.utils.timezone.now)),
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='api_token', to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.RunPython(hash_plain_tokens, migrations.RunPython.noop),
    ]
