"""Analytics on the database: unequal batch sizes, never-compared candidates, the orientation-free
agreement figures, per-annotator rows and the orientation exported with the judgements."""
import uuid

import pytest

from annotation import analytics
from annotation.services.judgements import judgement_submit
from annotation.services.projects import batch_create
from annotation.services.scheduling import set_next

pytestmark = pytest.mark.django_db


def _judge_all(batch, user, prefer):
    while (annotation_set := set_next(batch=batch, annotator=user)) is not None:
        for item in annotation_set.assignments.filter(status="open").select_related("pair__verse_a", "pair__verse_b"):
            a, b = item.pair.verse_a, item.pair.verse_b
            chosen = a if prefer(a.verse_id) >= prefer(b.verse_id) else b
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=chosen.pk, client_uuid=uuid.uuid4())


def test_smaller_batch_tournament_is_complete_and_never_compared_candidates_are_unranked(small_project, annotators):
    project, big = small_project  # 5 candidates
    small = batch_create(project=project, reference_id="100 5", candidate_ids=["100 1", "100 2", "100 3"], seed=1)
    project.overlap_per_set = 0
    project.save()
    _judge_all(small, annotators[0], prefer=lambda vid: -int(vid.split()[1]))
    report = analytics.project_report(project, n_boot=50)
    per = [r for r in report["triads"]["per_annotator"] if r["batch"] == small.name]
    assert per and per[0]["complete"] is True and per[0]["zeta"] == 1.0  # was "incomplete, ζ –" with 5 as n
    big_rows = [r for r in report["scores"] if r["batch_id"] == big.pk]
    assert all(r["bt_strength"] is None and r["rank"] is None and r["bt_low"] is None and r["normalized_score"] is None
               for r in big_rows)
    small_rows = sorted((r for r in report["scores"] if r["batch_id"] == small.pk), key=lambda r: r["rank"])
    assert [r["candidate_id"] for r in small_rows] == ["100 1", "100 2", "100 3"]
    assert all(r["bt_low"] <= r["bt_strength"] <= r["bt_high"] for r in small_rows)


def test_agreement_report_has_orientation_free_figures_and_per_annotator_rows(small_project, annotators):
    project, batch = small_project
    for user in annotators[:3]:
        _judge_all(batch, user, prefer=lambda vid: int(vid.split()[1]))
    report = analytics.project_report(project, n_boot=0)
    sym = report["agreement"]["symmetric"]
    assert sym["kendall_u"]["value"] == pytest.approx(1.0)  # everyone chose the same candidate every time
    assert report["agreement"]["orientation_rule"] == analytics.ORIENTATION_RULE
    names = {r["annotator"] for r in report["per_annotator"]}
    assert len(names) >= 2 and names == set(report["agreement"]["annotators"])
    assert all(r["majority_agreement"] in (None, 1.0) for r in report["per_annotator"])
    assert {r["annotator"] for r in report["annotator_aware"]["reliability"]} == names


def test_judgement_export_carries_the_orientation(small_project, annotators, client):
    project, batch = small_project
    _judge_all(batch, annotators[0], prefer=lambda vid: int(vid.split()[1]))
    client.force_login(project.owner)
    rows = client.get(f"/api/v1/projects/{project.pk}/judgements/?page_size=100").json()["results"]
    assert rows and all(r["orientation"] == analytics.ORIENTATION_RULE for r in rows)
    position = {c.verse.verse_id: c.position for c in batch.candidates.select_related("verse")}
    for r in rows:
        assert position[r["oriented_a_id"]] < position[r["oriented_b_id"]]
        assert r["b_won"] == (r["chosen_id"] == r["oriented_b_id"])
