"""A private version's jobs are its owner's and the leads' (and staff's), as the version is: every job id is asked
for as every role, on the API and on the job page, and none about the private version answers to anyone else.
Job ids are sequential, so the enumeration is what an outsider would do."""
import pytest

from benchmarks.models import BenchmarkVersion
from benchmarks.services.runs import LOCI_KIND
from benchmarks.services.suite_jobs import SUITE_KIND, stored_key
from jobs.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(loci_version, make_user, users):
    """The proposer's private version and every kind of job about it, next to jobs about an approved version."""
    from benchmarks.services import evaluation_run_create
    from detection.models import TrainedModel

    owner, other = make_user("res1", "researcher"), make_user("res2", "researcher")
    private = loci_version
    private.awaiting_approval, private.proposed_by = True, owner
    private.save(update_fields=["awaiting_approval", "proposed_by"])
    public = BenchmarkVersion.objects.create(benchmark=private.benchmark, version="open",
                                             query_corpus=private.query_corpus, source_corpus=private.source_corpus)
    about_private = []
    run = evaluation_run_create(version=private, method="bm25-lemma", ks=[1, 10], owner=owner, enqueue=False)
    about_private.append(run.job)
    about_private.append(Job.objects.create(kind=LOCI_KIND + ".shard", owner=owner, parent=run.job, shard_index=0,
                                            params={"run_id": run.pk, "start": 0, "stop": 10}))
    system = evaluation_run_create(version=private, method="tfidf-surface", ks=[1], owner=None, enqueue=False)
    about_private.append(system.job)  # a command-line run (no owner) on the private version
    training = Job.objects.create(kind="benchmarks.train_model", owner=owner,
                                  params={"version_id": private.pk, "name": "privy", "kind": "feature-classifier"})
    about_private.append(training)
    TrainedModel.objects.create(name="privy/all", kind="feature-classifier", method="feature-logreg",
                                training_job=training, benchmark=str(private))
    about_private.append(Job.objects.create(kind=SUITE_KIND, owner=owner, params={
        "methods": ["bm25-lemma"], "benchmarks": ["loci-545", stored_key(private)]}))
    with_model = evaluation_run_create(version=public, method="bm25-lemma", ks=[1], owner=owner, enqueue=False,
                                       reranker="feature-logreg", reranker_params={"model": "privy/all"})
    about_private.append(with_model.job)  # an approved version, ranked by a model learnt from the private one
    about_public = [evaluation_run_create(version=public, method="bm25-lemma", ks=[1], owner=other,
                                          enqueue=False).job,
                    Job.objects.create(kind=SUITE_KIND, owner=other, params={"methods": ["bm25-lemma"],
                                                                             "benchmarks": [stored_key(public)]})]
    roles = {"anonymous": None, "annotator": users["annotator"], "researcher-other": other, "owner": owner,
             "lead": users["lead"], "staff": users["staff"]}
    return roles, {j.pk for j in about_private}, {j.pk for j in about_public}


def _readable(client, pk: int, *, api: bool) -> bool:
    response = client.get(f"/api/v1/jobs/{pk}/" if api else f"/jobs/{pk}/")
    assert response.status_code in (200, 302, 401, 403, 404), (pk, response.status_code)
    return response.status_code == 200


def test_no_job_about_a_private_version_answers_anyone_but_its_owner_and_the_leads(world, client_for, page_client,
                                                                                     models_dir):
    from django.test import Client

    roles, private_ids, public_ids = world
    all_ids = range(1, max(Job.objects.values_list("pk", flat=True)) + 5)
    leaks, readable = [], {}
    for role, user in roles.items():
        api, page = client_for(user), page_client(user) if user else Client()
        seen = {pk for pk in all_ids if _readable(api, pk, api=True)}
        assert seen == {pk for pk in all_ids if _readable(page, pk, api=False)}, role  # the page as the API
        readable[role] = seen
        if role not in ("owner", "lead", "staff"):
            leaks += [(role, pk) for pk in seen & private_ids]
        listed = {row["id"] for row in api.get("/api/v1/jobs/", {"page_size": 1000}).json().get("results", [])}
        if role not in ("owner", "lead", "staff"):
            leaks += [(role, "list", pk) for pk in listed & private_ids]
    assert leaks == []
    assert private_ids <= readable["owner"] and private_ids <= readable["lead"] and private_ids <= readable["staff"]
    # not over-hidden: researchers and leads still follow the jobs about the approved version; annotators never
    assert public_ids <= readable["researcher-other"] and public_ids <= readable["owner"]
    assert readable["annotator"] == readable["anonymous"] == set()


def test_the_suite_and_models_pages_list_no_job_about_a_private_version(world, page_client):
    roles, private_ids, public_ids = world
    other, owner = page_client(roles["researcher-other"]), page_client(roles["owner"])
    for url, marker in (("/benchmarks/suite/", 'id="suite-{}"'), ("/benchmarks/models/", 'data-job="{}"')):
        theirs, mine = other.get(url).content.decode(), owner.get(url).content.decode()
        assert not [pk for pk in private_ids if marker.format(pk) in theirs], url
        assert [pk for pk in private_ids if marker.format(pk) in mine], url
    assert [pk for pk in public_ids if 'id="suite-{}"'.format(pk) in other.get("/benchmarks/suite/").content.decode()]
