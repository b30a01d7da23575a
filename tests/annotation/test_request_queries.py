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


def test_submit_is_seven_statements_and_a_retry_eight(world, client_for):
    _, batch = world
    client = client_for("annotator")
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    item = body["set"]["items"][0]
    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
               "client_uuid": str(uuid.uuid4()), "pair_id": item["pair_id"]}
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 201
    # token, roles, set (locked), assignment (locked), insert, assignment done, set completed if nothing is open
    assert len(sql) == 7, "\n".join(q[:90] for q in sql)
    assert not any("client_uuid" in q and q.lstrip().upper().startswith("SELECT") for q in sql)
    response, sql = _sql(client, "post", "/api/v1/judgements/", payload, format="json")
    assert response.status_code == 200 and len(sql) == 5, sql  # the stored row, nothing written


def test_next_set_statements(world, client_for):
    _, batch = world
    client = client_for("annotator")
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert response.status_code == 200 and not response.json()["done"]
    assert len(sql) == 14, "\n".join(q[:90] for q in sql)  # a new set: was 20
    response, sql = _sql(client, "post", f"/api/v1/batches/{batch.pk}/next-set/")
    assert len(sql) <= 9, "\n".join(q[:90] for q in sql)  # the open set again
