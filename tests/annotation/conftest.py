import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STS = ROOT / "data" / "dbbe" / "STS_benchmark_medievalGreek.tsv"
SHARED_SAMPLE = ROOT.parent / "shared" / "data" / "dbbe" / "dbbe_verses_sample.csv"


@pytest.fixture
def lead_user(make_user):
    return make_user("leadx", "lead")


@pytest.fixture
def annotators(make_user):
    return [make_user(f"ann{k}", "annotator") for k in range(1, 5)]


@pytest.fixture
def small_project(lead_user, annotators):
    """A project with 6 verses and one batch: reference v0, candidates v1..v5 (10 pairs)."""
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=lead_user, name="small", set_size=4, overlap_per_set=2)
    verses = [{"verse_id": f"100 {k}", "text": f"στίχος {k}", "translation": f"verse {k}"} for k in range(6)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json")
    for user in annotators:
        membership_add(project=project, username=user.username)
    batch = batch_create(project=project, reference_id="100 0", candidate_ids=[f"100 {k}" for k in range(1, 6)], seed=3)
    return project, batch


@pytest.fixture
def lead_client(client, small_project):
    """The test client logged in as the small project's owner (a lead): (client, project, batch)."""
    project, batch = small_project
    client.force_login(project.owner)
    return client, project, batch


@pytest.fixture
def sts_project(lead_user, annotators):
    from annotation.services.projects import membership_add, project_create, verses_import

    project = project_create(owner=lead_user, name="sts")
    # seeded serving order: the same pairs served first in every run (unseeded, one run in about twelve gave the
    # simulated annotators of test_stored_exports no circular triad of their own)
    verses_import(project=project, data=STS.read_bytes(), filename=STS.name, seed=45)
    for user in annotators:
        membership_add(project=project, username=user.username)
    return project
