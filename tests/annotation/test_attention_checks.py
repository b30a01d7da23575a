"""Attention checks: mixed into sets at the project's rate, never scored, pass rate per annotator."""
import uuid

import pytest

from annotation import analytics
from annotation.models import Pair
from annotation.selectors import batches_with_work_for, project_progress
from annotation.services.attention import attention_check_mark, attention_checks_build
from annotation.services.judgements import judgement_submit
from annotation.services.scheduling import set_next

pytestmark = pytest.mark.django_db


def test_checks_are_mixed_in_never_scored_and_pass_rates_are_reported(small_project, annotators, client):
    project, batch = small_project
    project.attention_per_set = 1
    project.overlap_per_set = 0
    project.save()
    assert attention_checks_build(batch=batch, actor=project.owner, n=3, seed=1) == 3
    checks = set(Pair.objects.filter(batch=batch, attention_answer__isnull=False).values_list("pk", flat=True))
    careful, careless = annotators[0], annotators[1]
    seen_checks = {careful.pk: 0, careless.pk: 0}
    active = [careful, careless]
    while active:  # alternate sets so that both get some of the batch
        user = active.pop(0)
        annotation_set = set_next(batch=batch, annotator=user)
        if annotation_set is None:
            continue
        active.append(user)
        items = list(annotation_set.assignments.select_related("pair"))
        assert sum(item.pair_id in checks for item in items) <= 1
        for item in items:
            pair = item.pair
            chosen = pair.verse_a_id
            if pair.pk in checks:
                seen_checks[user.pk] += 1
                right = pair.attention_answer_id
                chosen = right if user is careful else (pair.verse_a_id if pair.verse_b_id == right else pair.verse_b_id)
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=chosen, client_uuid=uuid.uuid4())
    assert seen_checks[careful.pk] >= 1 and seen_checks[careless.pk] >= 1
    report = analytics.project_report(project, n_boot=0)
    assert sum(r["comparisons"] for r in report["scores"]) == 2 * 10  # the 10 real pairs, each once, × 2 sides
    rows = {r["annotator"]: r for r in report["per_annotator"]}
    assert rows[careful.username]["attention_rate"] == 1.0
    assert rows[careless.username]["attention_rate"] == 0.0
    progress = project_progress(project=project)["batches"][0]
    assert progress["pairs_covered"] == 10 and progress["judgements"] == 10
    assert batches_with_work_for(user=annotators[2], batches=[batch]) == set()  # checks alone are no work
    client.force_login(project.owner)
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert "Attention checks" in html and "(3 check(s))" in html
    # The judgements export marks the checks (issue 26: they moved u from 0.479 to 0.499 when left in).
    rows = client.get(f"/api/v1/projects/{project.pk}/judgements/?page_size=100").json()["results"]
    marked = [r for r in rows if r["attention_check"]]
    assert len(marked) == sum(seen_checks.values()) and len(rows) == 10 + len(marked)
    assert all(r["attention_passed"] is None for r in rows if not r["attention_check"])
    assert {r["attention_passed"] for r in marked if r["annotator"] == careful.username} == {True}
    assert {r["attention_passed"] for r in marked if r["annotator"] == careless.username} == {False}
    csv = client.get(f"/api/v1/projects/{project.pk}/judgements/?format=csv").content.decode()
    assert "attention_check" in csv.splitlines()[0]


def test_a_lead_marks_a_known_answer_pair(small_project):
    project, batch = small_project
    pair = attention_check_mark(batch=batch, actor=project.owner, answer_id="100 1", other_id="100 2")
    assert pair.batch_id == batch.pk and pair.attention_answer.verse_id == "100 1"
    assert Pair.objects.filter(batch=batch).count() == 10  # an existing pair of the batch became a check
    with pytest.raises(Exception, match="Not among"):
        attention_check_mark(batch=batch, actor=project.owner, answer_id="nope", other_id="100 2")


def test_built_checks_pair_the_reference_with_the_least_like_candidates(small_project):
    """The platform's checks must be obvious: the reference against the candidates sharing fewest trigrams."""
    from annotation.models import BatchCandidate
    from annotation.services.attention import _likeness, _trigrams

    project, batch = small_project
    ref_grams = _trigrams(batch.reference.text)
    likeness = {c.verse_id: _likeness(ref_grams, _trigrams(c.verse.text))
                for c in BatchCandidate.objects.filter(batch=batch).select_related("verse")}
    assert attention_checks_build(batch=batch, actor=project.owner, n=2, seed=3) == 2
    chosen = [p.verse_a_id if p.verse_b_id == batch.reference_id else p.verse_b_id
              for p in Pair.objects.filter(batch=batch, attention_answer__isnull=False)]
    assert sorted(likeness[v] for v in chosen) == sorted(likeness.values())[:2]
    assert all(p.attention_answer_id == batch.reference_id
               for p in Pair.objects.filter(batch=batch, attention_answer__isnull=False))
