"""Judgements are never stored twice or on the wrong pair: UUID reuse, the pair shown, retried undo,
and the same-person rule of pilot batches (issue 10, section 1; the browser side is in tests/browser/)."""
import datetime as dt
import json
import uuid

import pytest
from django.utils import timezone

from annotation.models import AnnotationSet, Judgement
from annotation.services.errors import Conflict
from annotation.services.judgements import judgement_submit
from annotation.services.scheduling import set_next

pytestmark = pytest.mark.django_db


@pytest.fixture
def annotator_client(users, small_project, client_for):
    from annotation.services.projects import membership_add

    project, batch = small_project
    membership_add(project=project, username=users["annotator"].username)
    client = client_for("annotator")
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    return client, body


def _choice(item, **extra):
    return dict({"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                 "client_uuid": str(uuid.uuid4()), "pair_id": item["pair_id"]}, **extra)


def test_set_items_carry_their_pair_and_the_live_choice_uuid(annotator_client):
    client, body = annotator_client
    item = body["set"]["items"][0]
    payload = _choice(item)
    assert client.post("/api/v1/judgements/", payload, format="json").status_code == 201
    again = client.post(f"/api/v1/batches/{body['batch']['id']}/next-set/").json()["set"]["items"][0]
    assert again["pair_id"] == item["pair_id"] and again["client_uuid"] == payload["client_uuid"]
    assert again["chosen"] == item["left"]["id"]


def test_a_choice_for_another_pair_than_the_one_shown_is_refused(annotator_client):
    client, body = annotator_client
    first, second = body["set"]["items"][:2]
    response = client.post("/api/v1/judgements/", _choice(first, pair_id=second["pair_id"]), format="json")
    assert response.status_code == 409
    assert f"made on pair {second['pair_id']}" in response.json()["detail"]
    assert not Judgement.objects.exists()
    assert client.post("/api/v1/judgements/", _choice(first), format="json").status_code == 201


def test_resending_a_uuid_after_undo_is_a_conflict_with_the_reason(annotator_client):
    client, body = annotator_client
    payload = _choice(body["set"]["items"][0])
    assert client.post("/api/v1/judgements/", payload, format="json").status_code == 201
    assert client.post(f"/api/v1/sets/{body['set']['id']}/undo/").status_code == 200
    response = client.post("/api/v1/judgements/", payload, format="json")
    assert response.status_code == 409 and "was undone" in response.json()["detail"]
    assert Judgement.objects.filter(undone_at__isnull=True).count() == 0


def test_resending_a_uuid_with_another_choice_is_a_conflict_with_the_reason(annotator_client):
    client, body = annotator_client
    item = body["set"]["items"][0]
    payload = _choice(item)
    assert client.post("/api/v1/judgements/", payload, format="json").status_code == 201
    assert client.post("/api/v1/judgements/", payload, format="json").status_code == 200  # a plain retry
    other = dict(payload, chosen_verse=item["right"]["id"])
    response = client.post("/api/v1/judgements/", other, format="json")
    assert response.status_code == 409 and "another choice" in response.json()["detail"]
    assert list(Judgement.objects.values_list("chosen_id", flat=True)) == [item["left"]["id"]]


def test_undo_naming_its_judgement_is_safe_to_retry(annotator_client):
    client, body = annotator_client
    first, second = (_choice(item) for item in body["set"]["items"][:2])
    for payload in (first, second):
        assert client.post("/api/v1/judgements/", payload, format="json").status_code == 201
    url = f"/api/v1/sets/{body['set']['id']}/undo/"
    refused = client.post(url, {"client_uuid": first["client_uuid"]}, format="json")
    assert refused.status_code == 409 and "last choice" in refused.json()["detail"]
    undone = client.post(url, {"client_uuid": second["client_uuid"]}, format="json")
    retried = client.post(url, {"client_uuid": second["client_uuid"]}, format="json")
    assert undone.status_code == retried.status_code == 200
    assert undone.json()["id"] == retried.json()["id"] and retried.json()["client_uuid"] == second["client_uuid"]
    # The retry undid nothing else: the first choice stands.
    assert list(Judgement.objects.filter(undone_at__isnull=True).values_list("client_uuid", flat=True)) == [
        uuid.UUID(first["client_uuid"])]
    missing = client.post(url, {"client_uuid": str(uuid.uuid4())}, format="json")
    assert missing.status_code == 404


@pytest.fixture
def pilot(lead_user, annotators):
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=lead_user, name="pilotx", set_size=3, overlap_per_set=0)
    verses_import(project=project, data=json.dumps([{"verse_id": str(k), "text": f"v{k}"} for k in range(5)]).encode())
    membership_add(project=project, username=annotators[0].username)
    return batch_create(project=project, reference_id="0", candidate_ids=["1", "2", "3", "4"], pilot=True)


def test_pilot_late_answer_never_gives_one_annotator_two_judgements_of_a_pair(pilot, annotators):
    user = annotators[0]
    expired = set_next(batch=pilot, annotator=user)
    stale = {a.pair_id: a for a in expired.assignments.select_related("pair")}
    AnnotationSet.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    current = set_next(batch=pilot, annotator=user)
    served_again = [a for a in current.assignments.select_related("pair") if a.pair_id in stale]
    assert served_again, "the expired set's pairs are served again"
    late = stale[served_again[0].pair_id]
    with pytest.raises(Conflict, match="served to you again"):
        judgement_submit(annotator=user, assignment_id=late.pk, chosen_verse_id=late.pair.verse_a_id,
                         client_uuid=uuid.uuid4())
    for item in served_again:
        judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_b_id,
                         client_uuid=uuid.uuid4())
    pairs = list(Judgement.objects.filter(annotator=user, undone_at__isnull=True).values_list("pair_id", flat=True))
    assert len(pairs) == len(set(pairs)) == len(served_again)


def test_pilot_late_answer_is_kept_when_the_pair_was_not_served_again(pilot, annotators):
    user = annotators[0]
    expired = set_next(batch=pilot, annotator=user)
    late = expired.assignments.select_related("pair").first()
    AnnotationSet.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    from annotation.services.scheduling import sets_release_expired

    sets_release_expired(batch=pilot)
    _, created = judgement_submit(annotator=user, assignment_id=late.pk, chosen_verse_id=late.pair.verse_a_id,
                                  client_uuid=uuid.uuid4())
    assert created
    # The late answer's pair is not served again; the other pairs of the expired set are.
    while (annotation_set := set_next(batch=pilot, annotator=user)) is not None:
        assert late.pair_id not in set(annotation_set.assignments.values_list("pair_id", flat=True))
        for item in annotation_set.assignments.select_related("pair"):
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                             client_uuid=uuid.uuid4())
    pairs = list(Judgement.objects.filter(annotator=user, undone_at__isnull=True).values_list("pair_id", flat=True))
    assert sorted(pairs) == sorted(set(pairs)) and len(pairs) == pilot.n_pairs
