"""Services: import atomicity, batch creation, the scheduler's rules, judgements and undo."""
import datetime as dt
import json
import time
import uuid

import pytest
from django.db.models import Count, F
from django.utils import timezone

from annotation.importing import VerseFileError
from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Pair, Project, Verse
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound
from annotation.services.judgements import judgement_submit, judgement_undo_last
from annotation.services.projects import batch_create, project_create, verses_import
from annotation.services.scheduling import set_next, sets_release_expired

pytestmark = pytest.mark.django_db


def judge_set(annotation_set, user, pick="a"):
    stored = []
    for item in annotation_set.assignments.filter(status="open").select_related("pair"):
        chosen = item.pair.verse_a_id if pick == "a" else item.pair.verse_b_id
        stored.append(judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=chosen,
                                       client_uuid=uuid.uuid4(), response_ms=1200)[0])
    return stored


def test_sts_import_creates_100_verses_and_three_batches_with_all_pairs(sts_project):
    batches = {b.name: b for b in Batch.objects.filter(project=sts_project)}
    assert Verse.objects.filter(project=sts_project).count() == 100
    assert {name: (b.n_candidates, b.n_pairs) for name, b in batches.items()} == {
        "ref 16977 1": (99, 4851), "ref 17148 1": (99, 4851), "ref 16977 2": (98, 4753)}
    assert Pair.objects.filter(batch=batches["ref 16977 1"]).count() == 4851
    ranks = list(Pair.objects.filter(batch=batches["ref 16977 1"]).values_list("rank", flat=True))
    assert sorted(ranks) == list(range(4851))
    top = batches["ref 16977 1"].candidates.filter(gold_score=1.0).values_list("verse__verse_id", flat=True)
    assert "20963 1" in set(top)  # the file's top-scored candidates (normalised to 1.0)


def test_import_is_atomic_and_names_the_line(lead_user):
    project = project_create(owner=lead_user, name="atomic")
    bad = "verse_id,text\n1 1,α\n1 2,β\n1 3,\n".encode()
    with pytest.raises(VerseFileError, match="line 4: verse '1 3' has empty text"):
        verses_import(project=project, data=bad, filename="bad.csv")
    assert Verse.objects.filter(project=project).count() == 0


def test_import_rejects_a_changed_text_for_an_existing_id(lead_user):
    project = project_create(owner=lead_user, name="conflict")
    verses_import(project=project, data="verse_id,text\n1 1,α\n".encode())
    with pytest.raises(VerseFileError, match="already exists in the project with a different text"):
        verses_import(project=project, data="verse_id,text\n1 2,β\n1 1,γ\n".encode())
    assert list(Verse.objects.filter(project=project).values_list("verse_id", flat=True)) == ["1 1"]


def test_batch_of_99_candidates_has_all_4851_canonical_pairs(lead_user):
    project = project_create(owner=lead_user, name="big")
    verses = [{"verse_id": f"9 {k}", "text": f"v{k}"} for k in range(100)]
    verses_import(project=project, data=json.dumps(verses).encode())
    started = time.perf_counter()
    batch = batch_create(project=project, reference_id="9 0", candidate_ids=[f"9 {k}" for k in range(1, 100)])
    elapsed = time.perf_counter() - started
    assert batch.n_pairs == 4851 == Pair.objects.filter(batch=batch).count()
    assert Pair.objects.filter(batch=batch, verse_a_id__gte=F("verse_b_id")).count() == 0
    print(f"batch of 99 candidates: {elapsed * 1000:.0f} ms")



@pytest.mark.parametrize("reference, candidates, message", [
    ("100 0", ["100 1"], "at least two candidate"),
    ("100 0", ["100 0", "100 1", "100 2"], "cannot also be a candidate"),
    ("nope", ["100 1", "100 2"], "'nope'"),
    ("100 0", ["100 1", "x 9"], "not among the project's verses"),
])
def test_batch_creation_errors(small_project, reference, candidates, message):
    project, _ = small_project
    with pytest.raises(AnnotationError, match=message):
        batch_create(project=project, reference_id=reference, candidate_ids=candidates, name="other")


def test_set_has_set_size_pairs_random_sides_and_resumes(small_project, annotators):
    project, batch = small_project
    first = set_next(batch=batch, annotator=annotators[0])
    items = list(first.assignments.all())
    assert len(items) == project.set_size == 4
    assert {frozenset((a.left_id, a.right_id)) for a in items} == {
        frozenset((a.pair.verse_a_id, a.pair.verse_b_id)) for a in items}
    assert set_next(batch=batch, annotator=annotators[0]).pk == first.pk  # resumes the open set
    assert sum(a.is_overlap for a in items) == project.overlap_per_set


def test_left_right_order_is_randomised_across_presentations(sts_project, annotators):
    batch = Batch.objects.get(project=sts_project, name="ref 16977 1")
    lefts = []
    for _ in range(5):
        annotation_set = set_next(batch=batch, annotator=annotators[0])
        lefts += [a.left_id == a.pair.verse_a_id for a in annotation_set.assignments.select_related("pair")]
        judge_set(annotation_set, annotators[0])
    assert 10 < sum(lefts) < 40  # 50 presentations, about half with verse_a on the left


def test_no_pair_beyond_its_planned_judgements_and_overlap_from_another_annotator(small_project, annotators):
    project, batch = small_project
    for _ in range(6):
        for user in annotators:
            annotation_set = set_next(batch=batch, annotator=user)
            if annotation_set is not None:
                judge_set(annotation_set, user)
    counts = Judgement.objects.filter(batch=batch).values("pair").annotate(n=Count("id"), people=Count("annotator", distinct=True))
    planned = dict(Pair.objects.filter(batch=batch).values_list("pk", "planned"))
    assert len(counts) == 10  # every pair judged
    for row in counts:
        assert row["n"] <= planned[row["pair"]]
        assert row["n"] == row["people"]  # inter mode: never the same annotator twice
    assert any(row["n"] == 2 for row in counts)
    assert all(set_next(batch=batch, annotator=u) is None for u in annotators)


def test_retest_mode_repeats_the_annotators_own_pairs(small_project, annotators):
    project, batch = small_project
    project.overlap_mode = Project.OverlapMode.RETEST
    project.save()
    user = annotators[0]
    judged_pairs = []
    while (annotation_set := set_next(batch=batch, annotator=user)) is not None:
        judged_pairs += [j.pair_id for j in judge_set(annotation_set, user)]
    repeats = Judgement.objects.filter(batch=batch, assignment__is_repeat=True)
    assert repeats.exists()
    assert set(repeats.values_list("annotator", flat=True)) == {user.pk}
    assert len(judged_pairs) == 10 + repeats.count()
    assert all(set_next(batch=batch, annotator=u) is None for u in annotators[:1])


def test_pilot_batch_every_member_judges_every_pair(lead_user, annotators):
    from annotation.services.projects import membership_add

    project = project_create(owner=lead_user, name="pilot", set_size=4, overlap_per_set=0)
    verses_import(project=project, data=json.dumps([{"verse_id": str(k), "text": f"v{k}"} for k in range(5)]).encode())
    for user in annotators:
        membership_add(project=project, username=user.username)
    batch = batch_create(project=project, reference_id="0", candidate_ids=["1", "2", "3", "4"], pilot=True)
    assert batch.n_pairs == 6
    for user in annotators:
        while (annotation_set := set_next(batch=batch, annotator=user)) is not None:
            judge_set(annotation_set, user)
    per_pair = Judgement.objects.filter(batch=batch).values("pair").annotate(n=Count("annotator", distinct=True))
    assert sorted(row["n"] for row in per_pair) == [4] * 6


def test_abandoned_set_is_released_and_its_pairs_served_again(small_project, annotators):
    project, batch = small_project
    abandoned = set_next(batch=batch, annotator=annotators[0])
    pair_ids = set(abandoned.assignments.values_list("pair_id", flat=True))
    AnnotationSet.objects.filter(pk=abandoned.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert sets_release_expired(batch=batch) == 4
    assert Pair.objects.filter(pk__in=pair_ids, taken=0).count() == 4
    other = set_next(batch=batch, annotator=annotators[1])
    assert pair_ids & set(other.assignments.values_list("pair_id", flat=True))
    fresh = set_next(batch=batch, annotator=annotators[0])
    assert fresh.pk != abandoned.pk


def test_late_answer_on_a_released_set_is_kept_when_the_pair_has_room(small_project, annotators):
    project, batch = small_project
    annotation_set = set_next(batch=batch, annotator=annotators[0])
    item = annotation_set.assignments.select_related("pair").first()
    AnnotationSet.objects.filter(pk=annotation_set.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    sets_release_expired(batch=batch)
    judgement, created = judgement_submit(annotator=annotators[0], assignment_id=item.pk,
                                          chosen_verse_id=item.pair.verse_a_id, client_uuid=uuid.uuid4())
    assert created and Pair.objects.get(pk=item.pair_id).taken == 1


def test_submit_is_idempotent_on_client_uuid(small_project, annotators):
    project, batch = small_project
    item = set_next(batch=batch, annotator=annotators[0]).assignments.select_related("pair").first()
    key = uuid.uuid4()
    first, created = judgement_submit(annotator=annotators[0], assignment_id=item.pk,
                                      chosen_verse_id=item.pair.verse_b_id, client_uuid=key, response_ms=900)
    again, created_again = judgement_submit(annotator=annotators[0], assignment_id=item.pk,
                                            chosen_verse_id=item.pair.verse_b_id, client_uuid=key, response_ms=900)
    assert created and not created_again and first.pk == again.pk
    assert Judgement.objects.filter(assignment=item).count() == 1
    assert first.chose_left == (item.left_id == item.pair.verse_b_id)


@pytest.mark.parametrize("case", ["not_mine", "not_a_candidate", "already_judged", "closed_and_released", "missing",
                                  "bad_uuid"])
def test_submit_errors_store_nothing(small_project, annotators, case):
    project, batch = small_project
    item = set_next(batch=batch, annotator=annotators[0]).assignments.select_related("pair").first()
    user, verse, assignment_id, key = annotators[0], item.pair.verse_a_id, item.pk, uuid.uuid4()
    expected = AnnotationError
    if case == "not_mine":
        user, expected = annotators[1], NotAllowed
    elif case == "not_a_candidate":
        verse = batch.reference_id
    elif case == "already_judged":
        judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=verse, client_uuid=uuid.uuid4())
        expected = Conflict
    elif case == "closed_and_released":  # a served pair's answer is kept after a close (issue 39), a released one's not
        Batch.objects.filter(pk=batch.pk).update(status="closed")
        Assignment.objects.filter(pk=item.pk).update(status="expired")
        expected = Conflict
    elif case == "missing":
        assignment_id, expected = 10**9, NotFound
    elif case == "bad_uuid":
        key = "not-a-uuid"
    before = Judgement.objects.count()
    with pytest.raises(expected):
        judgement_submit(annotator=user, assignment_id=assignment_id, chosen_verse_id=verse, client_uuid=key)
    assert Judgement.objects.count() == before


def test_undo_reopens_the_last_choice_and_keeps_it_on_record(small_project, annotators):
    project, batch = small_project
    user = annotators[0]
    annotation_set = set_next(batch=batch, annotator=user)
    stored = judge_set(annotation_set, user)
    assert AnnotationSet.objects.get(pk=annotation_set.pk).status == "completed"
    undone = judgement_undo_last(annotator=user, set_id=annotation_set.pk)
    assert undone.pk == stored[-1].pk and undone.undone_at is not None
    assert AnnotationSet.objects.get(pk=annotation_set.pk).status == "open"
    assert Assignment.objects.get(pk=undone.assignment_id).status == "open"
    assert set_next(batch=batch, annotator=user).pk == annotation_set.pk
    item = Assignment.objects.select_related("pair").get(pk=undone.assignment_id)
    judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_b_id, client_uuid=uuid.uuid4())
    assert Judgement.objects.filter(assignment=item, undone_at__isnull=True).count() == 1
    assert Judgement.objects.filter(assignment=item).count() == 2
    with pytest.raises(NotAllowed):
        judgement_undo_last(annotator=annotators[1], set_id=annotation_set.pk)


def test_undo_refused_for_an_older_set(small_project, annotators):
    project, batch = small_project
    user = annotators[0]
    first = set_next(batch=batch, annotator=user)
    judge_set(first, user)
    set_next(batch=batch, annotator=user)
    with pytest.raises(Conflict, match="current set"):
        judgement_undo_last(annotator=user, set_id=first.pk)


def test_only_members_with_the_annotator_role_get_sets(small_project, make_user, lead_user):
    project, batch = small_project
    outsider = make_user("outsider", "annotator")
    with pytest.raises(NotAllowed):
        set_next(batch=batch, annotator=outsider)
    with pytest.raises(NotAllowed):
        set_next(batch=batch, annotator=lead_user)


def test_late_answer_refused_when_the_same_annotator_holds_the_pair_again(small_project, annotators):
    """Inter-annotator mode: an annotator whose set expired and who was served the same pair again
    cannot fill a second overlap slot of it with the late answer."""
    project, batch = small_project
    user = annotators[0]
    first = set_next(batch=batch, annotator=user)
    old_items = {a.pair_id: a for a in first.assignments.select_related("pair")}
    AnnotationSet.objects.filter(pk=first.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    second = set_next(batch=batch, annotator=user)
    again = set(second.assignments.values_list("pair_id", flat=True)) & set(old_items)
    assert again, "the released pairs are served again"
    pair_id = again.pop()
    stale = old_items[pair_id]
    with pytest.raises(Conflict, match="in your current set"):
        judgement_submit(annotator=user, assignment_id=stale.pk, chosen_verse_id=stale.pair.verse_a_id,
                         client_uuid=uuid.uuid4())
    assert Pair.objects.get(pk=pair_id).taken == 1
    assert not Judgement.objects.filter(pair_id=pair_id).exists()


def test_undo_after_the_deadline_reopens_the_set_with_fresh_time(small_project, annotators):
    project, batch = small_project
    user = annotators[0]
    annotation_set = set_next(batch=batch, annotator=user)
    judge_set(annotation_set, user)
    AnnotationSet.objects.filter(pk=annotation_set.pk).update(expires_at=timezone.now() - dt.timedelta(minutes=5))
    judgement_undo_last(annotator=user, set_id=annotation_set.pk)
    reopened = AnnotationSet.objects.get(pk=annotation_set.pk)
    assert reopened.status == "open" and reopened.expires_at > timezone.now()
    assert set_next(batch=batch, annotator=user).pk == annotation_set.pk


@pytest.mark.parametrize("settings, message", [
    ({"overlap_mode": "bogus"}, "overlap_mode"),
    ({"name": "bad name/x"}, "name"),
    ({"set_size": 3, "overlap_per_set": 5}, "overlap"),
])
def test_invalid_project_settings_are_refused(lead_user, settings, message):
    fields = {"name": "valid-name", **settings}
    with pytest.raises(AnnotationError, match=message):
        project_create(owner=lead_user, **fields)
    assert not Project.objects.exists()


def test_progress_counts_planned_judgements_of_every_pair(small_project):
    from annotation.selectors import project_progress
    from annotation.services.projects import batch_plan_judgements

    project, batch = small_project
    batch_plan_judgements(batch=batch, per_pair=3)
    row = project_progress(project=project)["batches"][0]
    assert row["planned_judgements"] == 30


def test_simulating_twice_with_the_same_seed_adds_more_judgements(sts_project):
    from annotation.services.simulation import simulate_annotations

    batch = Batch.objects.get(project=sts_project, name="ref 16977 2")
    first = simulate_annotations(project=sts_project, annotators=2, seed=0, batch_ids=[batch.pk], max_judgements=40)
    second = simulate_annotations(project=sts_project, annotators=2, seed=0, batch_ids=[batch.pk], max_judgements=40)
    assert first["judgements"] == second["judgements"] == 40
    assert Judgement.objects.filter(batch=batch).count() == 80
