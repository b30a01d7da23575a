"""The bulk simulation follows the scheduler's rules exactly (issue 16): run beside the old way
(every judgement through set_next and judgement_submit) on twin projects, the same sets go to the
same simulated annotators in the same order, and every pair ends with the same counters."""
import json
from collections import Counter

import pytest

from annotation.models import AnnotationSet, Assignment, Judgement, Pair, Project
from annotation.services.projects import batch_create, project_create, verses_import
from annotation.services.simulation import simulate_annotations, simulate_annotations_via_services

pytestmark = pytest.mark.django_db


def _twin(lead, name, *, mode="inter", pilot=False, n=12, set_size=5, overlap=2):
    project = project_create(owner=lead, name=name, set_size=set_size, overlap_per_set=overlap, overlap_mode=mode)
    verses_import(project=project, data=json.dumps([{"verse_id": f"5 {k}", "text": f"v{k}"} for k in range(n)]).encode(),
                  filename="v.json")
    batch_create(project=project, reference_id="5 0", candidate_ids=[f"5 {k}" for k in range(1, n)], seed=11,
                 pilot=pilot, name="b")
    return project


def _state(project: Project):
    sets = {}
    for s in AnnotationSet.objects.filter(batch__project=project).order_by("id"):
        items = frozenset(Assignment.objects.filter(set=s).values_list(
            "pair__verse_a__verse_id", "pair__verse_b__verse_id", "is_overlap", "is_repeat"))
        n_done = Assignment.objects.filter(set=s, status="done").count()
        sets.setdefault(s.annotator.username.rsplit("-", 1)[1], []).append((items, n_done, s.status))
    pairs = sorted(Pair.objects.filter(batch__project=project).values_list(
        "verse_a__verse_id", "verse_b__verse_id", "planned", "taken", "first_annotator__username"))
    pairs = [(a, b, planned, taken, first.rsplit("-", 1)[1] if first else None) for a, b, planned, taken, first in pairs]
    judged = Counter(Judgement.objects.filter(batch__project=project).values_list(
        "pair__verse_a__verse_id", "pair__verse_b__verse_id", "annotator__username"))
    judged = Counter({(a, b, who.rsplit("-", 1)[1]): c for (a, b, who), c in judged.items()})
    return sets, pairs, judged


@pytest.mark.parametrize("mode, pilot, per_pair, cap, annotators", [
    ("inter", False, 1, None, 3), ("inter", False, 2, None, 3), ("retest", False, 2, None, 2),
    ("inter", True, 1, None, 3), ("inter", False, 1, 37, 3), ("inter", False, 3, None, 4)])
def test_same_sets_and_counters_as_through_the_services(lead_user, mode, pilot, per_pair, cap, annotators):
    old = _twin(lead_user, "old", mode=mode, pilot=pilot)
    new = _twin(lead_user, "new", mode=mode, pilot=pilot)
    kwargs = dict(annotators=annotators, judgements_per_pair=per_pair, seed=4, max_judgements=cap)
    done_old = simulate_annotations_via_services(project=old, **kwargs)["judgements"]
    done_new = simulate_annotations(project=new, **kwargs)["judgements"]
    assert done_new == done_old > 0
    (sets_new, pairs_new, judged_new), (sets_old, pairs_old, judged_old) = _state(new), _state(old)
    assert sets_new == sets_old and pairs_new == pairs_old
    if cap is None:  # with a cap, which pairs of the last, half-judged set were answered depends on its random order
        assert judged_new == judged_old
    assert Judgement.objects.filter(batch__project=new).count() == done_new


def test_judgements_are_consistent_rows(lead_user):
    project = _twin(lead_user, "rows", n=20)
    simulate_annotations(project=project, annotators=3, judgements_per_pair=2, seed=1)
    rows = Judgement.objects.filter(batch__project=project).select_related("assignment", "pair")
    assert rows.count() == 2 * 171
    for j in rows:
        assert j.assignment.pair_id == j.pair_id and j.assignment.annotator_id == j.annotator_id
        assert j.assignment.set_id == j.set_id and j.assignment.status == "done"
        assert j.chosen_id in (j.pair.verse_a_id, j.pair.verse_b_id) and j.left_id == j.assignment.left_id
        assert j.chose_left == (j.chosen_id == j.left_id) and 800 <= j.response_ms < 6000
    assert not AnnotationSet.objects.filter(batch__project=project, status="open").exists()
    times = list(rows.order_by("annotator_id", "id").values_list("annotator_id", "created"))
    assert all(t1 <= t2 for (u1, t1), (u2, t2) in zip(times, times[1:]) if u1 == u2)  # each clock runs forward
    # after the simulation a real annotator is served nothing judged twice by them
    from annotation.services.scheduling import set_next

    assert set_next(batch=project.batches.get(), annotator=project.memberships.get(
        user__username="sim-rows-1").user) is None


def _judged_in_order(project: Project) -> list[tuple]:
    return list(Judgement.objects.filter(batch__project=project).order_by("annotator__username", "set_id", "assignment__position")
                .values_list("annotator__username", "assignment__position", "pair__verse_a__verse_id",
                             "pair__verse_b__verse_id", "left__verse_id", "chosen__verse_id",
                             "pair__attention_answer__verse_id"))


def test_attention_checks_simulate_without_error_and_the_seed_decides_everything(lead_user):
    """Issue 26: with platform-built checks (the reference against a candidate) the simulation raised KeyError
    (no strength for the reference), and the same --seed served different checks, sides and choices on two
    fresh databases (ORDER BY RANDOM(), an unseeded scheduler rng). Twin projects stand for the two databases:
    their verse and pair ids differ, their verse ids and pair ranks do not."""
    from annotation.services.attention import attention_checks_build

    runs = []
    for name in ("one", "two"):
        project = _twin(lead_user, name, n=10, set_size=5, overlap=1)
        Project.objects.filter(pk=project.pk).update(attention_per_set=1)
        project.refresh_from_db()
        assert attention_checks_build(batch=project.batches.get(), actor=lead_user, n=4, seed=2) == 4
        done = simulate_annotations(project=project, annotators=3, seed=9)["judgements"]
        rows = _judged_in_order(project)
        assert done == len(rows) > 36  # the 36 real pairs and the checks
        checks = [r for r in rows if r[6] is not None]
        assert checks and all(r[5] == r[6] for r in checks)  # simulated annotators pass the checks
        runs.append([(who.rsplit("-", 1)[1], *rest) for who, *rest in rows])
    assert runs[0] == runs[1]


def test_simulated_annotators_fail_attention_checks_at_the_set_rate_and_are_flagged(lead_user):
    """Issue 39: simulated annotators always passed the checks, so the simulation never exercised the flag. With a
    rate, annotator k fails a check with probability rate · s_k / noise (careful 0.5×, sloppy 1.5× the rate); the
    pass rates are read as the dashboard reads real ones, and the sloppiest falls under the 80 % flag."""
    from annotation.analytics import attention_pass_rates
    from annotation.services.attention import attention_checks_build
    from annotation.services.simulation import _fail_rates

    assert _fail_rates(1.0, 3, 0.4) == pytest.approx([0.2, 0.4, 0.6])
    project = _twin(lead_user, "fails", n=16, set_size=5, overlap=1)
    Project.objects.filter(pk=project.pk).update(attention_per_set=1)
    project.refresh_from_db()
    assert attention_checks_build(batch=project.batches.get(), actor=lead_user, n=6, seed=2) == 6
    simulate_annotations(project=project, annotators=3, seed=4, attention_fail_rate=0.4)
    rates = attention_pass_rates(project)
    careful, sloppy = rates["sim-fails-1"], rates["sim-fails-3"]
    assert careful["n"] >= 5 and sloppy["n"] >= 5
    failed = sum(r["n"] - r["passed"] for r in rates.values())
    assert failed > 0 and sloppy["passed"] / sloppy["n"] < 0.8  # flagged, as a real annotator would be
    with pytest.raises(ValueError):
        simulate_annotations(project=project, annotators=3, seed=4, attention_fail_rate=1.5)
