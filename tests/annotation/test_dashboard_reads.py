"""The dashboard reads only what it shows (issue 16): the progress counts come by fetch from their own
fragment, counted without joining every judgement to its pair, and numbers are formatted without the
locale machinery; both give what the slower ways gave."""
import random
import uuid

import pytest
from django.template.defaultfilters import floatformat

from annotation.dashboard_selectors import batch_progress
from annotation.models import Judgement, Pair
from annotation.selectors import project_progress
from annotation.services.attention import attention_checks_build
from annotation.services.judgements import judgement_submit, judgement_undo_last
from annotation.services.projects import batch_create
from annotation.services.scheduling import set_next
from annotation.templatetags.annotation_numbers import fixed

pytestmark = pytest.mark.django_db

KEYS = ("id", "name", "n_pairs", "judgements", "pairs_covered", "pairs_progress", "planned_judgements")


def _judge_some(project, batch, annotators, sets=2):
    checks = set(Pair.objects.filter(attention_answer__isnull=False).values_list("pk", flat=True))
    for user in annotators[:2]:
        for _ in range(sets):
            annotation_set = set_next(batch=batch, annotator=user)
            if annotation_set is None:
                break
            for item in annotation_set.assignments.select_related("pair"):
                judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                                 client_uuid=uuid.uuid4())
    return checks


def test_progress_counts_equal_the_joined_count_with_checks_undo_and_a_pilot(small_project, annotators):
    project, batch = small_project
    project.attention_per_set = 1
    project.save()
    assert attention_checks_build(batch=batch, actor=project.owner, n=2, seed=1) == 2
    pilot = batch_create(project=project, reference_id="100 5", candidate_ids=["100 1", "100 2", "100 3"],
                         name="pilot", pilot=True)
    empty = batch_create(project=project, reference_id="100 4", candidate_ids=["100 1", "100 2"], name="empty")
    checks = _judge_some(project, batch, annotators)
    _judge_some(project, pilot, annotators, sets=1)
    last = Judgement.objects.filter(annotator=annotators[0], batch=batch).latest("id")
    judgement_undo_last(annotator=annotators[0], set_id=last.set_id)
    assert Judgement.objects.filter(batch=batch, undone_at__isnull=False).count() == 1
    old = project_progress(project=project, per_annotator=False)
    new = batch_progress(project=project)
    assert [[b[k] for k in KEYS] for b in new["batches"]] == [[b[k] for k in KEYS] for b in old["batches"]]
    assert new["n_annotators"] == old["n_annotators"] == 4
    by_name = {b["name"]: b for b in new["batches"]}
    assert by_name[batch.name]["judgements"] > 0 and by_name["pilot"]["judgements"] > 0
    assert by_name["empty"]["judgements"] == 0 and by_name["empty"]["id"] == empty.pk
    assert checks  # the comparison above had attention checks to leave out


def test_the_page_fetches_its_progress_fragment(small_project, annotators, client):
    project, batch = small_project
    _judge_some(project, batch, annotators, sets=1)
    client.force_login(project.owner)
    page = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert f'data-src="/projects/{project.pk}/dashboard/progress/"' in page and "annotation/dashboard.js" in page
    fragment = client.get(f"/projects/{project.pk}/dashboard/progress/")
    assert fragment.status_code == 200
    row = batch_progress(project=project)["batches"][0]
    assert f"<td>{batch.name}</td>" in fragment.content.decode()
    assert f"{row['judgements']} / {row['planned_judgements']}" in fragment.content.decode()
    client.force_login(annotators[0])
    assert client.get(f"/projects/{project.pk}/dashboard/progress/").status_code == 403


def test_fixed_formats_numbers_as_floatformat_does():
    rng = random.Random(0)
    values = [None, "", "x", 0, -0.0, 1, -1, 0.0005, -0.0005, 0.0015, 2.675, 1234.5, -1e-9, 10**30, float("nan"), True]
    values += [rng.uniform(-5, 5) for _ in range(2000)] + [round(rng.uniform(-2, 2), 4) for _ in range(500)]
    for value in values:
        for places in (0, 1, 2, 3):
            assert fixed(value, places) == floatformat(value, places), (value, places)
