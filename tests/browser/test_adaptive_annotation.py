"""An adaptive batch is annotated in the browser exactly as any other: sets of 10, keys, undo, all choices saved,
the next set; the server chose the pairs by information gain (issue 26)."""
import json

import pytest

from annotation.models import AnnotationSet, Judgement, Pair

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_adaptive_batch_in_the_browser(live_server, page, make_user):
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    lead = make_user("alead", "lead")
    annotator = make_user("aann", "annotator")
    project = project_create(owner=lead, name="adaptive", set_size=10, overlap_per_set=3, overlap_mode="adaptive")
    verses = [{"verse_id": f"7 {k}", "text": f"στίχος ἀριθμὸς {k}"} for k in range(13)]  # 12 candidates, 66 pairs
    verses_import(project=project, data=json.dumps(verses).encode())
    membership_add(project=project, username=annotator.username)
    batch = batch_create(project=project, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 13)], seed=3)

    login(page, live_server.url, "aann", "pw-aann")
    page.click(f"a[href='/annotate/{batch.pk}/']")
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of 10')")
    page.wait_for_selector("#choices[data-ready]")
    for k in range(1, 10):
        page.keyboard.press("ArrowLeft" if k % 2 else "ArrowRight")
        page.wait_for_selector(f"#pair-counter:has-text('Pair {k + 1} of 10')")
        page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("u")
    page.wait_for_selector("#pair-counter:has-text('Pair 9 of 10')")
    page.wait_for_selector("#save-state:has-text('undone')")
    page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#pair-counter:has-text('Pair 10 of 10')")
    page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#set-done:not([hidden])")
    page.wait_for_selector("#save-state:has-text('All choices saved')")

    first = AnnotationSet.objects.get(batch=batch, annotator=annotator)
    assert first.status == "completed"
    assert Judgement.objects.filter(set=first, undone_at__isnull=True).count() == 10
    assert first.assignments.filter(is_overlap=True).count() == 3  # promoted for another annotator to repeat
    page.keyboard.press("Enter")  # the next set: chosen from the posterior after the first ten judgements
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of 10')")
    second = AnnotationSet.objects.filter(batch=batch, annotator=annotator).exclude(pk=first.pk).get()
    served = list(Pair.objects.filter(assignments__set__in=[first, second]).values_list("pk", flat=True))
    assert len(served) == len(set(served)) == 20  # never a pair twice to one annotator
