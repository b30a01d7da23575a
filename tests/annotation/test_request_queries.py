"""SQL statements of the two requests annotators make all day (issue 16: next set ≤ 15 ms, submit
≤ 5 ms in process): pinned exactly, so a change that adds one is seen."""
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(users, small_project):
    from annotation.services.projects import membership_add

    project, batch = small_project
    membership_add(project=project, username=users["annotator"].username)
    return project, batch


def _sql(client, method, *args, **kwargs):
    with CaptureQueriesContext(connection) as captured:
        response = getattr(client, method)(*args, **kwargs)
    # The test's own transaction turns the service's outermost atomic block into a savepoint: not counted.
    return response, [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_submit_is_three_statements_and_a_retry_three(world, client_for):
    _, batch = world
    client = client_for("annotator")
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    item = body["set"]["items"][0]
    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
               "client_uuid": str(uuid.uuid4()), "pair_id": item["pair_id"]}
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 201
    # the token with its user and roles; set and assignment (locked in one statement, set first); on PostgreSQL one
    # statement inserts, marks the assignment done and completes the set if nothing is open (was 6, 8 before that);
    # SQLite has no data-modifying CTEs: those are three there
    assert len(sql) == (3 if connection.vendor == "postgresql" else 5), "\n".join(q[:90] for q in sql)
    assert "FOR NO KEY UPDATE OF" not in sql[1] or sql[1].index('"annotation_annotationset"', sql[1].index(
        "FOR NO KEY UPDATE OF")) < sql[1].index('"annotation_assignment"', sql[1].index("FOR NO KEY UPDATE OF"))
    assert (connection.vendor != "postgresql") or ("FOR NO KEY UPDATE OF" in sql[1] and sql[2].startswith("WITH j AS"))
    assert not any("client_uuid" in q and q.lstrip().upper().startswith("SELECT") for q in sql)
    first = response.json()
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 200 and len(sql) == 3, sql  # token, the locks and the stored row, nothing written
    from annotation.api import JudgementSerializer
    from annotation.models import Judgement

    stored = JudgementSerializer(Judgement.objects.get(client_uuid=payload["client_uuid"])).data
    assert response.json() == stored and first == stored  # the hand-built answer is the serializer's


def test_next_set_statements(world, client_for):
    _, batch = world
    client = client_for("annotator")
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert response.status_code == 200 and not response.json()["done"]
    # a new set: the token with user and roles; the membership lock reading the batch, project and reference; the
    # open sets; the waiting and the fresh pairs (locked); the counters, the set and its assignments (one statement
    # on PostgreSQL, three on SQLite); the items with the progress. Was 12, 14 and 20 before that.
    assert len(sql) == (7 if connection.vendor == "postgresql" else 9), "\n".join(q[:90] for q in sql)
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert len(sql) == 4, "\n".join(q[:90] for q in sql)  # the open set again (was 7)


def _items_through_the_orm(annotation_set):
    """The set's items as set_payload built them before `selectors.set_items` (the reference)."""
    from annotation.models import Assignment, Judgement

    assignments = list(Assignment.objects.filter(set=annotation_set).exclude(status="expired")
                       .select_related("left", "right").order_by("position"))
    live, covered = {}, set()
    for j in Judgement.objects.filter(pair_id__in=[a.pair_id for a in assignments], undone_at__isnull=True):
        if j.set_id == annotation_set.pk:
            live[j.assignment_id] = (j.chosen_id, str(j.client_uuid))
        else:
            covered.add(j.pair_id)
    verse = lambda v: {"id": v.pk, "verse_id": v.verse_id, "text": v.text, "translation": v.translation}  # noqa: E731
    return [{"assignment_id": a.pk, "pair_id": a.pair_id, "position": a.position, "status": a.status,
             "left": verse(a.left), "right": verse(a.right), "chosen": live.get(a.pk, (None, None))[0],
             "client_uuid": live.get(a.pk, (None, None))[1], "covered_elsewhere": a.pair_id in covered}
            for a in assignments]


def test_set_items_match_the_orm_reference(small_project, annotators):
    """Live, undone and unjudged items, pairs judged in another set, an expired presentation left out."""
    from annotation.models import Assignment
    from annotation.selectors import batch_progress_for, set_items
    from annotation.services.judgements import judgement_submit, judgement_undo_last
    from annotation.services.scheduling import set_next

    _, batch = small_project
    first, second = annotators[:2]
    done = set_next(batch=batch, annotator=first)
    for a in done.assignments.all():
        judgement_submit(annotator=first, assignment_id=a.pk, chosen_verse_id=a.left_id, client_uuid=uuid.uuid4())
    mine = set_next(batch=batch, annotator=second)
    items = list(mine.assignments.order_by("position"))
    for a in items[:3]:
        judgement_submit(annotator=second, assignment_id=a.pk, chosen_verse_id=a.right_id, client_uuid=uuid.uuid4())
    judgement_undo_last(annotator=second, set_id=mine.pk)
    Assignment.objects.filter(pk=items[-1].pk).update(status="expired")
    got = set_items(annotation_set=mine)
    assert got == _items_through_the_orm(mine)
    assert any(i["covered_elsewhere"] for i in got) and sum(i["chosen"] is not None for i in got) == 2
    assert len(got) == len(items) - 1 and all(i["client_uuid"] is None or uuid.UUID(i["client_uuid"]) for i in got)
    progress = batch_progress_for(batch=batch, user=second)
    assert progress["my_judgements"] == 2 and progress["pairs_covered"] == len(
        {a.pair_id for a in done.assignments.all()} | {a.pair_id for a in items[:2]})
