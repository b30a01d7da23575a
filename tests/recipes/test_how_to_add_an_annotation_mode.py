"""docs/ARCHITECTURE.md, "How to add an annotation mode", followed with a toy mode: a strategy registered for a
test-only value (no migration: the project's value is written past the field's choices), then served sets and a
late judgement over the API follow the strategy, where the built-in inter-annotator mode behaves otherwise."""
import json
import uuid

import pytest
from django.db.models import F, Q

from annotation import modes
from annotation.models import AnnotationSet, Assignment, Judgement, Project
from annotation.selectors import batches_with_work_for
from annotation.services.projects import batch_create, membership_add, project_create, verses_import

TOY = "toy-open"

pytestmark = pytest.mark.django_db


class OpenOverlap(modes.OverlapStrategy):
    """Toy: a pair's second judgement may come from anyone, the annotator who judged it first included."""

    mode = TOY
    marks_repeat = False
    same_annotator_twice = True

    def waiting_for(self, *, user, batch_ids):
        return Q()  # every waiting pair

    def waiting_in_memory(self, *, waiting, uid, seen, judged):
        return iter(sorted(i for items in waiting.values() for i in items))


@pytest.fixture
def toy_mode():
    # Step 2: the strategy, registered under its mode.
    strategy = modes.register_mode(OpenOverlap())
    yield strategy
    modes._MODES.pop(TOY, None)  # the registry has no public removal: modes live as long as the process


def _project(lead, annotator, name: str, mode: str):
    project = project_create(owner=lead, name=name, set_size=4, overlap_per_set=2)
    # Step 1 would add the value to Project.OverlapMode (with its migration); the test writes it past the choices.
    Project.objects.filter(pk=project.pk).update(overlap_mode=mode)
    project.refresh_from_db()
    verses = [{"verse_id": f"7 {k}", "text": f"στίχος {k}"} for k in range(6)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json")
    membership_add(project=project, username=annotator.username)
    batch = batch_create(project=project, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 6)], seed=3)
    return project, batch


def _first_sets(users, client_for, prefix: str):
    """For the toy mode and for inter-annotator mode: a project, its batch and the annotator's first set."""
    client = client_for("annotator")
    out = {}
    for mode in (TOY, Project.OverlapMode.INTER):
        _, batch = _project(users["lead"], users["annotator"], f"{prefix}-{mode}", mode)
        out[mode] = batch, client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    return client, out


def _judge_all(client, body):
    for item in body["set"]["items"]:
        response = client.post("/api/v1/judgements/", {
            "assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
            "client_uuid": str(uuid.uuid4()), "pair_id": item["pair_id"]}, format="json")
        assert response.status_code == 201, response.content


def test_the_scheduler_serves_what_the_new_mode_allows(toy_mode, users, client_for):
    assert modes.mode_strategy(TOY) is toy_mode
    annotator = users["annotator"]
    client, first_sets = _first_sets(users, client_for, "p")
    served = {}
    for mode, (batch, first) in first_sets.items():
        _judge_all(client, first)
        second = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
        served[mode] = {item["pair_id"] for item in first["set"]["items"]}, second
    # The toy mode hands the annotator's own two promoted pairs back to them as overlap (not repeat) judgements.
    first_pairs, second = served[TOY]
    again = Assignment.objects.filter(set_id=second["set"]["id"], pair_id__in=first_pairs)
    assert again.count() == 2 and all(a.is_overlap and not a.is_repeat for a in again)
    # Inter-annotator mode never shows one person a pair twice: the second set is fresh pairs only.
    first_pairs, second = served[Project.OverlapMode.INTER]
    assert not first_pairs & {item["pair_id"] for item in second["set"]["items"]}
    # Step 3: the home page's "has work" check asks the same strategy.
    toy_batch = Project.objects.get(name=f"p-{TOY}").batches.get()
    _judge_all(client, served[TOY][1])
    while (body := client.post(f"/api/v1/batches/{toy_batch.pk}/next-set/").json())["done"] is False:
        assert toy_batch.pk in batches_with_work_for(user=annotator, batches=[toy_batch])
        _judge_all(client, body)
    assert batches_with_work_for(user=annotator, batches=[toy_batch]) == set()
    assert not toy_batch.pairs.filter(taken__lt=F("planned")).exists()  # every planned judgement was given


def test_a_late_judgement_follows_the_new_modes_rule(toy_mode, users, client_for):
    """A set expires, its pairs return to the pool and come back to the same annotator in a new set; then the
    late answer on the old set arrives. The toy mode lets one person hold two presentations, inter does not."""
    client, first_sets = _first_sets(users, client_for, "late")
    answers = {}
    for mode, (batch, old) in first_sets.items():
        AnnotationSet.objects.filter(pk=old["set"]["id"]).update(expires_at="2000-01-01T00:00:00Z")
        new = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
        assert new["set"]["id"] != old["set"]["id"]
        promoted = {item["pair_id"] for item in new["set"]["items"]} & set(
            batch.pairs.filter(planned=2).values_list("pk", flat=True))
        late = next(item for item in old["set"]["items"] if item["pair_id"] in promoted)
        response = client.post("/api/v1/judgements/", {
            "assignment_id": late["assignment_id"], "chosen_verse": late["left"]["id"],
            "client_uuid": str(uuid.uuid4()), "pair_id": late["pair_id"]}, format="json")
        answers[mode] = response.status_code, Judgement.objects.filter(batch=batch).count()
    assert answers[TOY] == (201, 1)
    assert answers[Project.OverlapMode.INTER] == (409, 0)


def test_every_mode_a_project_can_choose_has_a_strategy():
    assert set(Project.OverlapMode.values) <= set(modes.registered_modes())
    with pytest.raises(ValueError):
        modes.register_mode(modes.InterAnnotator())  # one strategy per mode
    with pytest.raises(ValueError):
        modes.mode_strategy("no-such-mode")
