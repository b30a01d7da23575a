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


def test_submit_is_six_statements_and_a_retry_four(world, client_for):
    _, batch = world
    client = client_for("annotator")
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    item = body["set"]["items"][0]
    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
               "client_uuid": str(uuid.uuid4()), "pair_id": item["pair_id"]}
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 201
    # token, roles, set and assignment (locked in one statement, set first), insert, assignment done, set
    # completed if nothing is open
    assert len(sql) == 6, "\n".join(q[:90] for q in sql)
    assert "FOR NO KEY UPDATE OF" not in sql[2] or sql[2].index('"annotation_annotationset"', sql[2].index(
        "FOR NO KEY UPDATE OF")) < sql[2].index('"annotation_assignment"', sql[2].index("FOR NO KEY UPDATE OF"))
    assert not any("client_uuid" in q and q.lstrip().upper().startswith("SELECT") for q in sql)
    first = response.json()
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 200 and len(sql) == 4, sql  # the locks and the stored row, nothing written
    from annotation.api import JudgementSerializer
    from annotation.models import Judgement

    stored = JudgementSerializer(Judgement.objects.get(client_uuid=payload["client_uuid"])).data
    assert response.json() == stored and first == stored  # the hand-built answer is the serializer's


def test_next_set_statements(world, client_for):
    _, batch = world
    client = client_for("annotator")
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert response.status_code == 200 and not response.json()["done"]
    # a new set: was 20, then 14 (the release's locking read only runs when a set is past its deadline)
    assert len(sql) == 13, "\n".join(q[:90] for q in sql)
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert len(sql) == 8, "\n".join(q[:90] for q in sql)  # the open set again
