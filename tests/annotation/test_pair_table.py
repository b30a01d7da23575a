"""The pair table after migration 0006 (issue 16): fewer indexes, the same integrity. The database still
refuses a pair whose batch or verse does not exist, and the deletions that use the (now partial) indexes on
first_annotator and attention_answer keep their rules."""
import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models.deletion import ProtectedError

from annotation.models import Pair, Verse

pytestmark = pytest.mark.django_db


def _insert(batch_id, a, b):
    """A raw insert, as COPY/executemany write them (no ORM checks), then the deferred foreign keys."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("INSERT INTO annotation_pair (batch_id, verse_a_id, verse_b_id, rank, planned, taken) "
                       "VALUES (%s, %s, %s, 999, 1, 0)", [batch_id, a, b])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE" if connection.vendor == "postgresql"
                       else "PRAGMA foreign_key_check(annotation_pair)")
        problems = [] if connection.vendor == "postgresql" else cursor.fetchall()
        if problems:
            raise IntegrityError(f"foreign key check: {problems}")


@pytest.mark.parametrize("what", ["batch", "verse_a", "verse_b"])
def test_the_database_refuses_a_pair_pointing_nowhere(small_project, what):
    _, batch = small_project
    a, b = sorted(Verse.objects.filter(project=batch.project).values_list("pk", flat=True))[-2:]
    missing = 10**9
    args = {"batch": (missing, a, b), "verse_a": (batch.pk, a - missing, b), "verse_b": (batch.pk, a, b + missing)}
    with pytest.raises(IntegrityError):
        _insert(*args[what])
    assert not Pair.objects.filter(rank=999).exists()


def test_deleting_a_first_annotator_clears_it_and_an_answer_verse_is_protected(small_project, annotators):
    _, batch = small_project
    pair = Pair.objects.filter(batch=batch).first()
    pair.first_annotator = annotators[0]
    pair.attention_answer_id = pair.verse_a_id
    pair.save(update_fields=["first_annotator", "attention_answer"])
    annotators[0].delete()
    pair.refresh_from_db()
    assert pair.first_annotator_id is None
    with pytest.raises(ProtectedError):
        Verse.objects.filter(pk=pair.attention_answer_id).delete()


def test_the_pair_indexes(small_project):
    """What 0006 leaves: no single-column batch_id index; first_annotator and attention_answer indexed where set."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Pair._meta.db_table)
    indexed = {tuple(c["columns"]) for c in constraints.values() if c["index"] or c["unique"]}
    assert ("batch_id",) not in indexed
    assert {("batch_id", "verse_a_id", "verse_b_id"), ("batch_id", "taken", "rank"), ("batch_id", "planned", "taken"),
            ("verse_a_id",), ("verse_b_id",), ("first_annotator_id",), ("attention_answer_id",)} <= indexed
    partial = {name for name in ("pair_first_annotator_set", "pair_attention_answer_set") if name in constraints}
    assert len(partial) == 2
