"""Many annotators at once (threads, each with its own database connection; PostgreSQL in CI):
no pair is handed out beyond its planned judgements, no judgement is lost or stored twice."""
import threading
import uuid

import pytest
from django.db import connection
from django.db.models import Count, F
from rest_framework.test import APIClient

from annotation.models import Judgement, Pair
from tests.conftest import api_key

pytestmark = pytest.mark.django_db(transaction=True)


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def _run_threads(targets):
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)
            finally:
                connection.close()
        return run

    threads = [threading.Thread(target=wrap(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors


def test_concurrent_annotators_never_exceed_planned_judgements(make_user, lead_user):
    import json

    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=lead_user, name="race", set_size=10, overlap_per_set=3)
    verses_import(project=project, data=json.dumps([{"verse_id": f"5 {k}", "text": f"v{k}"} for k in range(21)]).encode())
    batch = batch_create(project=project, reference_id="5 0", candidate_ids=[f"5 {k}" for k in range(1, 21)])  # 190 pairs
    people = [make_user(f"racer{k}", "annotator") for k in range(8)]
    for user in people:
        membership_add(project=project, username=user.username)
    submitted = {user.username: 0 for user in people}

    def annotate(user):
        def loop():
            client = _client(user)
            for _ in range(100):
                body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
                if body["done"]:
                    return
                for item in body["set"]["items"]:
                    if item["chosen"] is not None:
                        continue
                    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                               "client_uuid": str(uuid.uuid4()), "response_ms": 5}
                    first = client.post("/api/v1/judgements/", payload, format="json")
                    retry = client.post("/api/v1/judgements/", payload, format="json")  # a network retry
                    assert first.status_code == 201, first.content
                    assert retry.status_code == 200 and retry.json()["id"] == first.json()["id"]
                    submitted[user.username] += 1
        return loop

    _run_threads([annotate(user) for user in people])
    live = Judgement.objects.filter(batch=batch, undone_at__isnull=True)
    assert live.count() == sum(submitted.values())
    planned = dict(Pair.objects.filter(batch=batch).values_list("pk", "planned"))
    per_pair = live.values("pair").annotate(n=Count("id"), people=Count("annotator", distinct=True))
    assert len(per_pair) == 190  # every pair judged at least once
    for row in per_pair:
        assert row["n"] <= planned[row["pair"]], row
        assert row["people"] == row["n"], row  # inter-annotator mode: distinct annotators
    doubled = sum(1 for row in per_pair if row["n"] == 2)
    assert doubled > 0
    assert Pair.objects.filter(batch=batch).exclude(taken=F("planned")).count() == 0


def test_concurrent_duplicate_submits_are_stored_once(small_project, annotators):
    from annotation.services.scheduling import set_next

    project, batch = small_project
    user = annotators[0]
    item = set_next(batch=batch, annotator=user).assignments.select_related("pair").first()
    payload = {"assignment_id": item.pk, "chosen_verse": item.pair.verse_a_id, "client_uuid": str(uuid.uuid4())}
    codes = []

    def submit():
        codes.append(_client(user).post("/api/v1/judgements/", payload, format="json").status_code)

    api_key(user)  # issued before the threads, which only read it
    _run_threads([submit for _ in range(6)])
    assert sorted(codes) == [200] * 5 + [201]
    assert Judgement.objects.filter(assignment=item).count() == 1



def test_concurrent_release_late_answers_and_undo_keep_the_invariants(make_user, lead_user):
    """Sets expire at once (timeout 0), so every next-set releases other annotators' sets while they
    answer, undo and answer again: no server error, no pair beyond its plan, no person twice on a pair."""
    import json

    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=lead_user, name="churn", set_size=6, overlap_per_set=2, set_timeout_minutes=0)
    verses_import(project=project, data=json.dumps([{"verse_id": f"6 {k}", "text": f"v{k}"} for k in range(13)]).encode())
    batch = batch_create(project=project, reference_id="6 0", candidate_ids=[f"6 {k}" for k in range(1, 13)])  # 66 pairs
    people = [make_user(f"churn{k}", "annotator") for k in range(6)]
    for user in people:
        membership_add(project=project, username=user.username)
    statuses = []

    def annotate(user):
        def loop():
            client = _client(user)
            for round_ in range(12):
                response = client.post(f"/api/v1/batches/{batch.pk}/next-set/")
                statuses.append(response.status_code)
                body = response.json()
                if body["done"]:
                    return
                for k, item in enumerate(body["set"]["items"]):
                    if item["chosen"] is not None:
                        continue
                    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["right"]["id"],
                               "client_uuid": str(uuid.uuid4())}
                    statuses.append(client.post("/api/v1/judgements/", payload, format="json").status_code)
                    if k == 1:
                        statuses.append(client.post(f"/api/v1/sets/{body['set']['id']}/undo/").status_code)
        return loop

    _run_threads([annotate(user) for user in people])
    assert all(code < 500 for code in statuses), sorted(set(statuses))
    assert {200, 201} <= set(statuses)
    live = Judgement.objects.filter(batch=batch, undone_at__isnull=True)
    planned = dict(Pair.objects.filter(batch=batch).values_list("pk", "planned"))
    for row in live.values("pair").annotate(n=Count("id"), people=Count("annotator", distinct=True)):
        assert row["n"] <= planned[row["pair"]], row
        assert row["people"] == row["n"], row
    for pair in Pair.objects.filter(batch=batch):
        assert pair.taken <= pair.planned


def test_a_set_answered_all_at_once_is_completed(small_project, annotators):
    """Every choice of a set sent at the same moment: the last one to take the set's lock sees the others done
    (its completion check is a statement of its own, after the lock: PostgreSQL's one write statement reads the
    other assignments in a snapshot taken once it holds the lock), so the set ends completed, never left open."""
    from annotation.models import AnnotationSet
    from annotation.services.scheduling import set_next

    _, batch = small_project
    user = annotators[0]
    for _ in range(2):
        annotation_set = set_next(batch=batch, annotator=user)
        items = list(annotation_set.assignments.select_related("pair"))
        codes = []

        def submit(item):
            payload = {"assignment_id": item.pk, "chosen_verse": item.pair.verse_b_id, "client_uuid": str(uuid.uuid4())}
            return lambda: codes.append(_client(user).post("/api/v1/judgements/", payload, format="json").status_code)

        api_key(user)  # issued before the threads, which only read it
        _run_threads([submit(item) for item in items])
        assert codes == [201] * len(items)
        annotation_set.refresh_from_db()
        assert annotation_set.status == AnnotationSet.Status.COMPLETED and annotation_set.completed_at is not None
        assert not annotation_set.assignments.exclude(status="done").exists()


def test_a_double_click_on_next_set_serves_one_set(small_project, annotators):
    """Concurrent next-set requests of one annotator queue on the membership row and the later ones read the set
    the first one made (the open sets are read by a statement after the lock): one set, the same for all."""
    from annotation.models import AnnotationSet

    _, batch = small_project
    user = annotators[1]
    ids = []

    clients = [_client(user) for _ in range(5)]  # the key is issued before the threads start

    def fetch(client):
        return lambda: ids.append(client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()["set"]["id"])

    _run_threads([fetch(client) for client in clients])
    assert len(set(ids)) == 1 and AnnotationSet.objects.filter(batch=batch, annotator=user).count() == 1
