"""A gold set made from a project's batch records that project; reading its pairs follows the project's
rules (its leads, researchers, staff) until a lead of the project publishes the set."""
import json
import uuid

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def project_b(make_user, users):
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next

    lead_b = make_user("lead-b", "lead")
    project = project_create(owner=lead_b, name="project-b", set_size=4, overlap_per_set=2)
    verses_import(project=project, data=json.dumps(
        [{"verse_id": f"5 {k}", "text": f"secret verse {k}"} for k in range(5)]).encode(), filename="v.json")
    membership_add(project=project, username=users["annotator"].username)
    batch = batch_create(project=project, reference_id="5 0", candidate_ids=[f"5 {k}" for k in range(1, 5)], seed=2)
    annotation_set = set_next(batch=batch, annotator=users["annotator"])
    for item in annotation_set.assignments.select_related("pair"):
        judgement_submit(annotator=users["annotator"], assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                         client_uuid=uuid.uuid4())
    return project, batch, lead_b


@pytest.fixture
def gold_from_b(project_b, client_for):
    from benchmarks.models import GoldSimilaritySet

    project, batch, lead_b = project_b
    page = client_for(lead_b)
    page.force_login(lead_b)
    response = page.post(f"/benchmarks/gold-sets/from-batch/{batch.pk}/", {"name": "from B"})
    assert response.status_code == 302, response.content
    gold = GoldSimilaritySet.objects.get(name="from B")
    assert gold.source_project_id == project.pk and not gold.published
    return gold


def test_a_lead_outside_the_project_cannot_read_its_gold_set(client_for, users, gold_from_b):
    outsider = client_for("lead")  # a lead, but not of project B
    for url in (f"/api/v1/sts/gold-sets/{gold_from_b.pk}/pairs/", f"/api/v1/sts/gold-sets/{gold_from_b.pk}/",
                f"/api/v1/sts/gold-sets/{gold_from_b.pk}/pairs.csv"):
        assert outsider.get(url).status_code == 404, url
    assert gold_from_b.pk not in {g["id"] for g in outsider.get("/api/v1/sts/gold-sets/").json()["results"]}
    outsider.force_login(users["lead"])
    for url in (f"/benchmarks/gold-sets/{gold_from_b.pk}/", f"/benchmarks/gold-sets/{gold_from_b.pk}/pairs.csv",
                f"/benchmarks/gold-sets/{gold_from_b.pk}/pairs.json"):
        assert outsider.get(url).status_code == 404, url
    assert "from B" not in outsider.get("/benchmarks/").content.decode()


def test_the_projects_leads_and_researchers_read_it(client_for, project_b, gold_from_b):
    _, _, lead_b = project_b
    for who in (lead_b, "researcher", "staff"):
        response = client_for(who).get(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/pairs/")
        assert response.status_code == 200 and response.json()["count"] > 0, who


def test_runs_on_a_restricted_gold_set_are_hidden_too(client_for, gold_from_b):
    from benchmarks.models import SimilarityRun

    run = SimilarityRun.objects.create(gold_set=gold_from_b, method="levenshtein",
                                       report={"predictions": [{"reference_id": "5 0", "candidate_id": "5 1"}]})
    outsider = client_for("lead")
    assert outsider.get(f"/api/v1/sts/runs/{run.pk}/").status_code == 404
    assert outsider.get(f"/api/v1/sts/runs/{run.pk}/predictions.csv").status_code == 404
    assert run.pk not in {r["id"] for r in outsider.get("/api/v1/sts/runs/").json()["results"]}
    assert client_for("researcher").get(f"/api/v1/sts/runs/{run.pk}/").status_code == 200


def test_a_lead_of_the_project_publishes_it_for_every_lead(client_for, make_user, project_b, gold_from_b):
    _, _, lead_b = project_b
    outsider = client_for("lead")
    assert outsider.post(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/publish/").status_code == 404
    # a researcher reads it but is not a lead of the project: may not publish
    denied = client_for("researcher").post(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/publish/")
    assert denied.status_code == 403 and "lead of the gold set's source project" in denied.json()["detail"]
    published = client_for(lead_b).post(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/publish/")
    assert published.status_code == 200 and published.json()["published"] is True
    assert outsider.get(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/pairs/").status_code == 200
    withdrawn = client_for(lead_b).post(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/publish/", {"published": False},
                                        format="json")
    assert withdrawn.status_code == 200 and withdrawn.json()["published"] is False
    assert outsider.get(f"/api/v1/sts/gold-sets/{gold_from_b.pk}/pairs/").status_code == 404


def test_gold_sets_from_files_stay_readable_by_every_lead(client_for):
    from benchmarks.models import GoldSimilarityPair, GoldSimilaritySet

    gold = GoldSimilaritySet.objects.create(name="file set")
    GoldSimilarityPair.objects.create(gold_set=gold, reference_id="a", reference_text="α", candidate_id="b",
                                      candidate_text="β", score=1.0)
    assert client_for("lead").get(f"/api/v1/sts/gold-sets/{gold.pk}/pairs/").status_code == 200


def test_filtering_runs_by_a_restricted_gold_set_answers_as_for_a_missing_one(client_for, gold_from_b):
    """`?gold_set=` must not tell an outsider that a set they may not read exists (an existence oracle)."""
    from benchmarks.models import GoldSimilaritySet

    outsider = client_for("lead")
    missing = GoldSimilaritySet.objects.order_by("-pk").first().pk + 1000
    hidden = outsider.get("/api/v1/sts/runs/", {"gold_set": gold_from_b.pk})
    absent = outsider.get("/api/v1/sts/runs/", {"gold_set": missing})
    assert hidden.status_code == absent.status_code == 400
    assert str(hidden.json()).replace(str(gold_from_b.pk), "N") == str(absent.json()).replace(str(missing), "N")
    assert client_for("researcher").get("/api/v1/sts/runs/", {"gold_set": gold_from_b.pk}).status_code == 200
