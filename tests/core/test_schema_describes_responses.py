"""Every endpoint is in the OpenAPI schema with its request and a described response (issue 27): `next-set`, the
call that starts annotating, had none, and nine others answered a free-form object. Now every success answer is
described, every write's body too, and the descriptions are checked against real answers: the endpoints below
are called on real data and each answer is validated against its own schema (an unlisted key, a missing required
one or a wrong type fails), so a description cannot drift from what the code sends."""
import json
import uuid

import pytest
from django.conf import settings
from jsonschema import Draft202012Validator

FREE_FORM = {"type": "object", "additionalProperties": {}}
# the writes that take no body (their schema says so: no requestBody)
BODILESS = {("post", "/api/v1/batches/{id}/next-set/"), ("post", "/api/v1/benchmarks/versions/{id}/approve/"),
            ("post", "/api/v1/jobs/{id}/cancel/"), ("delete", "/api/v1/auth/token/"),
            # the lead's actions on an object named by the path (annotation/lead_api.py, the workbench's runs)
            ("post", "/api/v1/projects/{id}/archive/"), ("post", "/api/v1/projects/{id}/unarchive/"),
            ("post", "/api/v1/projects/{id}/study/annotators/{user_id}/retry/"),
            ("delete", "/api/v1/projects/{id}/"), ("delete", "/api/v1/batches/{id}/"), ("delete", "/api/v1/verses/{id}/"),
            ("delete", "/api/v1/projects/{id}/study/items/{item_id}/"), ("delete", "/api/v1/workbench/runs/{id}/")}
STS_FILE = settings.DATA_DIR / "dbbe" / "STS_benchmark_medievalGreek.tsv"
EXAMPLES = settings.DATA_DIR / "locisimiles" / "package_examples"
LOCI_DIR = settings.DATA_DIR / "locisimiles"


def _free(schema) -> bool:
    return schema in (None, {}, FREE_FORM)


def _undescribed(schema: dict) -> set[tuple[str, str]]:
    out = set()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            success = {code: r for code, r in operation["responses"].items() if str(code).startswith("2")}
            described = any(code == "204" or any(not _free(body.get("schema")) for body in r.get("content", {}).values())
                            for code, r in success.items())
            if not described:
                out.add((method, path))
    return out


def _bodies(schema: dict) -> tuple[set, set]:
    """(writes without a request body, writes whose body is a free-form object)."""
    none, free = set(), set()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in ("post", "put", "patch", "delete"):
                continue
            body = operation.get("requestBody")
            if body is None:
                none.add((method, path))
            elif any(_free(c.get("schema")) for c in body["content"].values()):
                free.add((method, path))
    return none, free


@pytest.mark.django_db
def test_every_request_and_response_is_described(client_for):
    schema = client_for("researcher").get("/api/schema/?format=json").json()
    assert not _undescribed(schema), f"describe what these answer: {sorted(_undescribed(schema))}"
    none, free = _bodies(schema)
    assert not free, f"describe what these take: {sorted(free)}"
    assert none == BODILESS, f"writes without a described body: {sorted(none - BODILESS)}"
    next_set = schema["paths"]["/api/v1/batches/{id}/next-set/"]["post"]
    assert "requestBody" not in next_set  # it takes no body
    body = next_set["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    properties = schema["components"]["schemas"][body]["properties"]
    assert {"batch", "reference", "progress", "done", "set"} <= set(properties)


@pytest.mark.django_db
def test_the_next_set_answer_matches_its_description(client_for, users):
    from annotation.models import Batch
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=users["lead"], name="schema-check", title="t")
    verses_import(project=project, data=b"verse_id,text\n1 1,alpha\n1 2,beta\n1 3,gamma\n", filename="v.csv")
    batch_create(project=project, reference_id="1 1", candidate_ids=["1 2", "1 3"], name="b")
    membership_add(project=project, username=users["annotator"].username, role="annotator")
    schema = client_for("researcher").get("/api/schema/?format=json").json()["components"]["schemas"]
    answer = client_for("annotator").post(f"/api/v1/batches/{Batch.objects.get(name='b').pk}/next-set/").json()
    assert set(answer) == set(schema["NextSetOutput"]["properties"])
    assert set(answer["set"]) == set(schema["NextSetOpenSet"]["properties"])
    assert set(answer["set"]["items"][0]) == set(schema["NextSetItem"]["properties"])
    assert set(answer["progress"]) == set(schema["NextSetProgress"]["properties"])


# --- real answers against their descriptions ----------------------------------------------------------------

def _strict(node):
    """OpenAPI 3.0 → JSON Schema for checking answers: `nullable` allows null, and an object that lists its
    properties without saying what other keys hold refuses unlisted keys (an answer's extra key is undescribed)."""
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: ({name: _strict(s) for name, s in v.items()} if k == "properties" else _strict(v))
           for k, v in node.items() if k != "nullable"}
    if node.get("nullable"):
        out = {**out, "type": [out["type"], "null"]} if isinstance(out.get("type"), str) else {
            "anyOf": [out, {"type": "null"}]}
    if "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


class _Checker:
    def __init__(self, schema: dict):
        self.schema = schema
        self.components = _strict(schema["components"])
        self.checked: set[tuple[str, str]] = set()

    def __call__(self, method: str, path: str, response, status: int = 200) -> dict:
        assert response.status_code == status, (path, response.status_code, response.content[:300])
        described = self.schema["paths"][path][method]["responses"][str(status)]["content"]["application/json"]
        answer = response.json()
        validator = Draft202012Validator({**_strict(described["schema"]), "components": self.components})
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(answer)]
        assert not errors, (method, path, errors[:5])
        self.checked.add((method, path))
        return answer


@pytest.mark.django_db
def test_real_answers_match_their_descriptions(client_for, users, make_user, tmp_path):
    """The ten endpoints that answered a free-form object before, each called on real data: a Greek STS project
    with simulated judgements (stored and live agreement), a Loci Similes evaluation with a reranker, a training
    request, detections with and without explanations, and a promotion."""
    from django.core.management import call_command

    from annotation.models import Batch, Project
    from annotation.services.projects import membership_add
    from benchmarks.models import EvaluationRun
    from benchmarks.services import benchmark_import_545
    from jobs.runner import run_job
    from jobs.services import job_create
    from workbench.models import Candidate
    from workbench.services import detection_run_create, document_from_corpus, document_upload, verdict_set

    lead, researcher, annotator = client_for("lead"), client_for("researcher"), client_for("annotator")
    check = _Checker(researcher.get("/api/schema/?format=json").json())

    # annotation: a verse import making batches, progress, the annotator's batches, agreement stored and live
    project = lead.post("/api/v1/projects/", {"name": "schema-sts", "title": "STS"}, format="json").json()
    with STS_FILE.open("rb") as f:
        summary = check("post", "/api/v1/projects/{id}/verses/import/",
                        lead.post(f"/api/v1/projects/{project['id']}/verses/import/", {"file": f}, format="multipart"),
                        201)
    assert summary["created"] > 0 and summary["batches"]
    owner = Project.objects.get(pk=project["id"])
    names = ["ann"] + [make_user(f"sim-ann-{k}", "annotator").username for k in (2, 3)]
    for name in names:
        membership_add(project=owner, username=name)
    call_command("simulate_annotations", "--project", "schema-sts", "--annotators", "3", "--seed", "1",
                 "--max-judgements", "240")
    batch = Batch.objects.filter(project=owner).first()
    assign = annotator.post(f"/api/v1/batches/{batch.pk}/next-set/").json()["set"]["items"][0]
    annotator.post("/api/v1/judgements/", {"assignment_id": assign["assignment_id"],
                                           "chosen_verse": assign["left"]["id"],
                                           "client_uuid": str(uuid.uuid4())}, format="json")
    progress = check("get", "/api/v1/projects/{id}/progress/", lead.get(f"/api/v1/projects/{owner.pk}/progress/"))
    assert progress["annotators"] and sum(b["judgements"] for b in progress["batches"]) > 0
    mine = check("get", "/api/v1/me/batches/", annotator.get("/api/v1/me/batches/"))
    assert any(row["my_judgements"] > 0 for row in mine["results"]) and mine["count"] == len(mine["results"])
    live = check("get", "/api/v1/projects/{id}/agreement/",
                 lead.get(f"/api/v1/projects/{owner.pk}/agreement/?since=2000-01-01T00:00:00Z"))
    assert live["source"] == "live" and live["agreement"]["n_judgements"] > 0 and "fleiss" in live["agreement"]
    job = job_create(kind="annotation.analytics", params={"project_id": owner.pk, "n_boot": 5})
    assert run_job(job.pk) == "succeeded"
    stored = check("get", "/api/v1/projects/{id}/agreement/", lead.get(f"/api/v1/projects/{owner.pk}/agreement/"))
    assert stored["source"] == "stored" and stored["job"] == job.pk

    # benchmarks: a real evaluation's report (retrieval, reranker, overlap sections) and a training request
    version, _ = benchmark_import_545(with_text_path=LOCI_DIR / "pairs_545_with_text.csv",
                                      ref_type_path=LOCI_DIR / "pairs_545_ref_type.csv", name="loci-schema")
    call_command("evaluate", "--benchmark", "loci-schema", "--method", "bm25-lemma", "--ks", "1,10",
                 "--reranker", "lexical-rule", "--output", str(tmp_path / "report.json"))
    run = EvaluationRun.objects.get()
    report = check("get", "/api/v1/benchmarks/runs/{id}/report/", researcher.get(f"/api/v1/benchmarks/runs/{run.pk}/report/"))
    assert report["recall@10"] > 0.5 and report["per_query"][0]["recall@10"] is not None and "rerank" in report
    assert report == json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    queued = check("post", "/api/v1/models/", researcher.post(
        "/api/v1/models/", {"version": version.pk, "kind": "feature-classifier", "name": "schema-m",
                            "method": "feature-logreg"}, format="json"), 202)
    assert queued["status"] == "queued"

    # workbench: methods, a detection with explanations, its candidates and one of them, a promotion
    check("get", "/api/v1/workbench/methods/", researcher.get("/api/v1/workbench/methods/"))
    me = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=me)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=me)
    explained = detection_run_create(query_document=query, source_document=source, retriever="channels", top_k=3,
                                     owner=me)
    assert run_job(explained.job_id) == "succeeded"
    page = check("get", "/api/v1/workbench/runs/{id}/candidates/",
                 researcher.get(f"/api/v1/workbench/runs/{explained.pk}/candidates/?page_size=5"))
    assert page["count"] == 33 and len(page["results"]) == 5 and page["next"]
    first = Candidate.objects.filter(run=explained).exclude(explain={}).first()
    verdict_set(candidate=first, user=me, decision="cit.", note="schema")
    detail = check("get", "/api/v1/workbench/candidates/{id}/", researcher.get(f"/api/v1/workbench/candidates/{first.pk}/"))
    assert detail["explanation"]["channels"] and detail["verdicts"][0]["decision"] == "cit."
    plain = detection_run_create(query_document=document_from_corpus(corpus=version.query_corpus),
                                 source_document=document_from_corpus(corpus=version.source_corpus),
                                 retriever="bm25-lemma", top_k=1, owner=me)
    assert run_job(plain.job_id) == "succeeded"
    bare = Candidate.objects.filter(run=plain).first()
    assert check("get", "/api/v1/workbench/candidates/{id}/",
                 researcher.get(f"/api/v1/workbench/candidates/{bare.pk}/"))["explanation"] is None
    verdict_set(candidate=bare, user=me, decision="cit.")
    promoted = check("post", "/api/v1/workbench/runs/{id}/promote/", researcher.post(
        f"/api/v1/workbench/runs/{plain.pk}/promote/", {"base_version": version.pk, "version": "2"}, format="json"), 201)
    assert promoted["awaiting_approval"] is True and promoted["n_gold"] >= 545
    assert len(check.checked) == 10


@pytest.mark.django_db
def test_the_leads_actions_answer_as_described(client_for, users):
    """The lead's housekeeping and study set-up (annotation/lead_api.py), each answer checked against its schema."""
    from annotation.models import Batch, Verse
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    lead = client_for("lead")
    check = _Checker(client_for("researcher").get("/api/schema/?format=json").json())
    project = project_create(owner=users["lead"], name="lead-actions")
    verses_import(project=project, data=b"verse_id,text\n1 1,alpha\n1 2,beta\n1 3,gamma\n1 4,delta\n", filename="v.csv")
    batch = batch_create(project=project, reference_id="1 1", candidate_ids=["1 2", "1 3"], name="b")
    membership_add(project=project, username=users["annotator"].username)
    p, spare = project.pk, Verse.objects.get(project=project, verse_id="1 4").pk
    check("post", "/api/v1/projects/{id}/rename/", lead.post(f"/api/v1/projects/{p}/rename/", {"name": "lead-2"},
                                                             format="json"))
    # a project is renamed by PATCH too, as a batch is: its body describes `name` (the rename's rule in words)
    patch = check.schema["paths"]["/api/v1/projects/{id}/"]["patch"]
    body = patch["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    name = check.schema["components"]["schemas"][body]["properties"]["name"]
    assert name["type"] == "string" and name["maxLength"] == 100 and "letters, digits" in name["description"]
    assert check("patch", "/api/v1/projects/{id}/", lead.patch(f"/api/v1/projects/{p}/", {"name": "lead-3"},
                                                               format="json"))["name"] == "lead-3"
    for plan in ("archive-plan", "delete-plan"):
        check("get", f"/api/v1/projects/{{id}}/{plan}/", lead.get(f"/api/v1/projects/{p}/{plan}/"))
    assert check("post", "/api/v1/projects/{id}/archive/", lead.post(f"/api/v1/projects/{p}/archive/"))["archived_at"]
    check("post", "/api/v1/projects/{id}/unarchive/", lead.post(f"/api/v1/projects/{p}/unarchive/"))
    check("patch", "/api/v1/batches/{id}/", lead.patch(f"/api/v1/batches/{batch.pk}/", {"name": "b2"}, format="json"))
    check("get", "/api/v1/batches/{id}/delete-plan/", lead.get(f"/api/v1/batches/{batch.pk}/delete-plan/"))
    assert check("get", "/api/v1/verses/{id}/", lead.get(f"/api/v1/verses/{spare}/"))["uses"]["candidate_in"] == 0
    check("patch", "/api/v1/verses/{id}/", lead.patch(f"/api/v1/verses/{spare}/", {"verse_id": "1 4a"}, format="json"))
    check("get", "/api/v1/verses/{id}/delete-plan/", lead.get(f"/api/v1/verses/{spare}/delete-plan/"))
    check("delete", "/api/v1/verses/{id}/", lead.delete(f"/api/v1/verses/{spare}/"))
    study = f"/api/v1/projects/{p}/study/"
    item = check("post", "/api/v1/projects/{id}/study/items/", lead.post(
        f"{study}items/", {"kind": "check", "reference_id": "1 1", "answer_id": "1 2", "other_id": "1 3"},
        format="json"), 201)
    check("get", "/api/v1/projects/{id}/study/items/", lead.get(f"{study}items/"))
    check("patch", "/api/v1/projects/{id}/study/", lead.patch(study, {"consent_text": "Yes.", "check_on": True},
                                                              format="json"))
    check("get", "/api/v1/projects/{id}/study/", lead.get(study))
    client_for("annotator").post(f"/api/v1/batches/{batch.pk}/next-set/")  # refused, but the study record exists
    from annotation.models import Project
    from annotation.services.study import consent_give

    consent_give(project=Project.objects.get(pk=p), user=users["annotator"])
    assert check("get", "/api/v1/projects/{id}/study/annotators/", lead.get(f"{study}annotators/"))["results"][0]["consented_at"]
    lead.patch(study, {"check_on": False}, format="json")
    check("delete", "/api/v1/projects/{id}/study/items/{item_id}/", lead.delete(f"{study}items/{item['id']}/"))
    check("delete", "/api/v1/batches/{id}/", lead.delete(f"/api/v1/batches/{batch.pk}/"))
    assert not Batch.objects.filter(pk=batch.pk).exists()
    check("delete", "/api/v1/projects/{id}/", lead.delete(f"/api/v1/projects/{p}/"))
    assert len(check.checked) == 20


@pytest.mark.django_db
def test_the_score_exports_answer_as_described(client_for, users, make_user):
    """The score exports' page carries `source`, `n_boot`, `computed_at` and `job` beside the page shape: live
    (computed for the request) and stored (the last analytics run), for a project and for one batch."""
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next
    from jobs.runner import run_job
    from jobs.services import job_create

    project = project_create(owner=users["lead"], name="scores-schema", set_size=4, overlap_per_set=1)
    verses_import(project=project, data=b"verse_id,text\n1 0,r\n1 1,a\n1 2,b\n1 3,c\n1 4,d\n", filename="v.csv")
    batch = batch_create(project=project, reference_id="1 0", candidate_ids=["1 1", "1 2", "1 3", "1 4"], seed=1)
    for k in range(2):
        user = make_user(f"scorer{k}", "annotator")
        membership_add(project=project, username=user.username)
        for item in set_next(batch=batch, annotator=user).assignments.all():
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.left_id,
                             client_uuid=uuid.uuid4())
    lead = client_for("lead")
    check = _Checker(client_for("researcher").get("/api/schema/?format=json").json())
    live = check("get", "/api/v1/projects/{id}/scores/", lead.get(f"/api/v1/projects/{project.pk}/scores/?n_boot=5"))
    assert (live["source"], live["n_boot"], live["computed_at"], live["job"]) == ("live", 5, None, None)
    assert live["count"] == 4 and sum(row["comparisons"] for row in live["results"]) > 0
    job = job_create(kind="annotation.analytics", params={"project_id": project.pk, "n_boot": 5})
    assert run_job(job.pk) == "succeeded"
    stored = check("get", "/api/v1/projects/{id}/scores/", lead.get(f"/api/v1/projects/{project.pk}/scores/"))
    assert (stored["source"], stored["job"]) == ("stored", job.pk) and stored["computed_at"]
    one = check("get", "/api/v1/batches/{id}/scores/", lead.get(f"/api/v1/batches/{batch.pk}/scores/?page_size=2"))
    assert one["source"] == "stored" and one["count"] == 4 and len(one["results"]) == 2
    filtered = check("get", "/api/v1/batches/{id}/scores/",
                     lead.get(f"/api/v1/batches/{batch.pk}/scores/?annotator=scorer0"))
    assert filtered["source"] == "live" and filtered["job"] is None
