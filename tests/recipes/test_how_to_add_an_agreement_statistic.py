"""docs/ARCHITECTURE.md, "How to add an agreement statistic", followed with a toy statistic (the share of units
on which every annotator chose the same candidate): registered by the decorator, reported by the pure
`orientation_invariant_agreement`, and served by the agreement export API from a project's real judgements."""
import json

import numpy as np
import pytest

from annotation import stats
from annotation.stats.agreement import AgreementResult, _binary_counts

KEY = "recipes_unanimous_share"


def unanimous_share(j) -> AgreementResult:
    # Step 1: a pure function of the label table, orientation-free (a unit's two counts may swap).
    t = _binary_counts(j)
    rated = t.sum(1) >= 2
    if not rated.any():
        return AgreementResult(float("nan"), float("nan"), float("nan"), 0, 0, "no unit rated by >= 2 raters",
                               "unanimous-share")
    t = t[rated]
    share = float((t.min(1) == 0).mean())
    return AgreementResult(share, share, float("nan"), int(len(t)), int(t.sum()), None, "unanimous-share")


@pytest.fixture
def toy_statistic():
    # Step 2: register it under its report key.
    stats.agreement_statistic(KEY)(unanimous_share)
    yield KEY
    stats.AGREEMENT_STATISTICS.pop(KEY, None)  # the registry has no public removal: statistics live with the process


def test_the_toy_statistic_is_reported_next_to_the_built_in_ones(toy_statistic):
    # 3 units: two unanimous (3-0, 0-2), one split (1-1); a unit judged once is left out.
    counts = np.array([[3, 0], [0, 2], [1, 1], [1, 0]])
    figures = stats.orientation_invariant_agreement(stats.LabelTable(
        labels=np.array([[0, 0, 0], [1, 1, -1], [0, 1, -1], [0, -1, -1]], dtype=np.int8), units=np.arange(4)))
    assert list(figures) == ["fleiss_symmetric", "kendall_u", "krippendorff_symmetric", KEY, "cohen_symmetric"]
    assert figures[KEY]["value"] == pytest.approx(2 / 3) and figures[KEY]["n_units"] == 3
    assert unanimous_share(counts).value == unanimous_share(counts[:, ::-1]).value  # orientation-free
    # The built-in figures are unchanged by the new registration.
    assert figures["kendall_u"] == stats.kendall_u(counts).as_dict()
    with pytest.raises(ValueError, match="already registered"):
        stats.agreement_statistic(KEY)(unanimous_share)


@pytest.mark.django_db
def test_the_toy_statistic_reaches_the_agreement_api(toy_statistic, make_user, client_for):
    from annotation import analytics
    from annotation.services.projects import batch_create, project_create, verses_import
    from annotation.services.simulation import simulate_annotations

    lead = make_user("recipe-lead", "lead")
    project = project_create(owner=lead, name="recipe-agreement", set_size=4, overlap_per_set=2)
    verses = [{"verse_id": f"v{k}", "text": f"στίχος {k}"} for k in range(6)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json")
    batch_create(project=project, reference_id="v0", candidate_ids=[f"v{k}" for k in range(1, 6)], seed=1)
    simulate_annotations(project=project, annotators=3, judgements_per_pair=3, seed=0)
    staff = client_for("staff")
    body = staff.get(f"/api/v1/projects/{project.pk}/agreement/").json()
    assert body["source"] == "live"
    figure = body["agreement"]["symmetric"][KEY]
    assert figure["method"] == "unanimous-share" and figure["n_units"] > 0
    expected = unanimous_share(stats.label_table(analytics.load_project_data(project).judgements))
    assert figure["value"] == pytest.approx(expected.value) and figure["n_units"] == expected.n_units
