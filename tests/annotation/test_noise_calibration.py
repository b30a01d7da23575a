"""Simulated annotators are calibrated to real agreement (issue 26): the DBBE STS gold's when a project has no
judgements of its own, the project's when it has enough pairs judged by two annotators; the simulated judgements
then agree as often as the calibration said, and the planning job names its source."""
import pytest

from annotation.models import Batch
from annotation.services.simulation import MIN_CALIBRATION_UNITS, noise_calibration, simulate_annotations
from annotation.stats import fleiss_kappa_symmetric
from annotation.stats.pair_selection import DBBE_AGREEMENT
from jobs.runner import run_job
from jobs.services import job_create

pytestmark = pytest.mark.django_db


def _observed(project, batch):
    from annotation.analytics import load_project_data

    return fleiss_kappa_symmetric(load_project_data(project, batch_ids=[batch.pk]).judgements)


def test_without_judgements_the_gold_calibrates_and_the_simulation_agrees_as_often(sts_project):
    calibration = noise_calibration(sts_project)
    assert calibration["agreement"] == pytest.approx(DBBE_AGREEMENT) and "DBBE STS gold" in calibration["source"]
    assert "0 pairs judged by two annotators" in calibration["source"]
    batch = Batch.objects.get(project=sts_project, name="ref 16977 1")
    summary = simulate_annotations(project=sts_project, annotators=3, seed=3, batch_ids=[batch.pk],
                                   max_judgements=3000)
    assert summary["calibration"] == calibration
    result = _observed(sts_project, batch)
    assert result.n_units > 300
    # the simulated annotators agree on their doubled (random) pairs as the gold's did; uncalibrated (θ = 6 · gold)
    # they agreed 0.67 (below)
    assert result.observed == pytest.approx(DBBE_AGREEMENT, abs=0.05)


def test_a_project_with_judgements_calibrates_to_its_own_annotators(sts_project):
    batches = {b.name: b for b in Batch.objects.filter(project=sts_project)}
    # "Real" judgements: annotators noisier than the gold's (the old, uncalibrated strengths θ = 6 · gold)
    simulate_annotations(project=sts_project, annotators=3, seed=5, batch_ids=[batches["ref 17148 1"].pk],
                         max_judgements=2000, calibrate=False)
    own = _observed(sts_project, batches["ref 17148 1"])
    assert own.n_units >= MIN_CALIBRATION_UNITS and own.observed < DBBE_AGREEMENT - 0.08
    calibration = noise_calibration(sts_project)
    assert calibration["agreement"] == pytest.approx(own.observed)
    assert "this project's annotators" in calibration["source"] and str(own.n_units) in calibration["source"]
    # a new simulated batch follows the project's agreement, not the gold's
    summary = simulate_annotations(project=sts_project, annotators=3, seed=6, batch_ids=[batches["ref 16977 1"].pk],
                                   max_judgements=3000)
    assert summary["calibration"]["agreement"] == pytest.approx(own.observed)
    simulated = _observed(sts_project, batches["ref 16977 1"])
    assert simulated.observed == pytest.approx(own.observed, abs=0.05)
    assert simulated.observed < DBBE_AGREEMENT - 0.05
    # the planning job compares designs under the same calibration and says so
    job = job_create(kind="annotation.plan", params={"project_id": sts_project.pk, "n_items": 20, "n_reps": 1,
                                                     "shares": [0.5]})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert "this project's annotators" in job.result["designs"]["calibration"]


def test_an_adaptive_project_is_not_calibrated_on_its_close_pairs(lead_user):
    from annotation.services.projects import project_create

    project = project_create(owner=lead_user, name="adaptive-cal", set_size=10, overlap_per_set=3,
                             overlap_mode="adaptive")
    calibration = noise_calibration(project)
    assert calibration["agreement"] == pytest.approx(DBBE_AGREEMENT) and "adaptively" in calibration["source"]
