"""No 5xx, whatever a client sends (issue 40): the schema-driven fuzzer's short form (perf/fuzz_api.py: schemathesis
over the OpenAPI schema as anonymous, annotator, researcher, lead and staff, the demo's objects in place, a fixed
seed), and the cases that were 500s: NUL in the path and the headers, numbers beyond a 64-bit column or a float, deep
nesting in a JSON field of a JSON, form-encoded or multipart body. Each refusal is a 400 with a sentence, read by the
one guarded reader (core.safejson). On SQLite here, on PostgreSQL where DATABASE_URL names one (CI)."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "perf"))

import fuzz_api  # noqa: E402

pytestmark = pytest.mark.django_db(transaction=False)

HUGE = 10**309  # float(HUGE) raises OverflowError; as a seed it overflows the column
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture
def demo():
    """The fuzzer's objects (the demo and its additions) and an API client per demo role."""
    from rest_framework.test import APIClient

    fuzz_api.objects_in_place()
    clients = {}
    for role, login in fuzz_api.ROLES.items():
        clients[role] = APIClient()
        if login:  # the token as a client gets it
            key = APIClient().post("/api/v1/auth/token/", dict(zip(("username", "password"), login))).json()["token"]
            clients[role].credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return clients


def _refused(response, *words: str) -> str:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    text = json.dumps(response.json(), ensure_ascii=False) if "json" in response["Content-Type"] else \
        response.content.decode()
    assert all(word in text for word in words), text
    return text


def test_nul_in_the_path_and_the_headers_is_a_400(demo, client):
    assert client.get("/invite/a%00b/").status_code == 400
    assert demo["anonymous"].get("/api/v1/jobs/1%00/").status_code == 400
    text = _refused(demo["anonymous"].get("/api/v1/me/", HTTP_AUTHORIZATION="Token a\x00b"), "NUL")
    assert "Authorization" in text
    assert client.get("/", HTTP_COOKIE="sessionid=a\x00b").status_code == 400


def test_numbers_beyond_a_column_or_a_float_are_refused_with_a_sentence(demo):
    from annotation.models import Project
    from benchmarks.models import BenchmarkVersion
    from workbench.models import Document

    researcher, lead = demo["researcher"], demo["lead"]
    docs = list(Document.objects.order_by("pk").values_list("pk", flat=True)[:2])
    run = {"query_document": docs[0], "source_document": docs[-1], "retriever": "channels"}
    version = BenchmarkVersion.objects.filter(awaiting_approval=False).order_by("pk").first().pk
    project = Project.objects.filter(owner__username="lead").order_by("pk").first().pk
    cases = [
        ("post", "/api/v1/workbench/runs/", {**run, "retriever_params": {"lemma_weight": HUGE}}),
        ("post", "/api/v1/workbench/runs/", {**run, "thresholds": {"cit.": HUGE}}),
        ("post", "/api/v1/benchmarks/runs/", {"version": version, "method": "bm25-lemma", "params": {"k1": HUGE}}),
        ("post", "/api/v1/benchmarks/runs/", {"version": version, "method": "bm25-lemma", "seed": HUGE}),
        ("post", "/api/v1/models/", {"version": version, "kind": "feature-classifier", "method": "feature-logreg",
                                     "name": "huge", "params": {"C": HUGE}}),
        ("patch", f"/api/v1/projects/{project}/study/", {"check_pass_share": HUGE}),
        ("post", f"/api/v1/projects/{project}/study/items/from-gold/", {"kind": "training", "n": 2, "min_gap": HUGE}),
    ]
    for method, url, body in cases:
        response = getattr(lead if "projects" in url else researcher, method)(
            url, json.dumps(body), content_type="application/json")
        assert response.status_code == 400, (url, body if len(str(body)) < 200 else "…", response.content[:300])
    for big, words in (("1" + "0" * 309, "out of range"), ("1e400", "finite"), ("9" * 5000, "5000 digits")):
        text = _refused(researcher.post("/api/v1/benchmarks/runs/", f'{{"version": {version}, "method": '
                                        f'"bm25-lemma", "params": {{"k1": {big}}}}}', content_type="application/json"),
                        '"params"', "k1: ", words)  # the field and the key named, the number shortened
        assert len(text) < 300
    # a seed the 32-bit column cannot hold is the limit's sentence (core.run_limits.EVALUATION_SEED)
    _refused(researcher.post("/api/v1/benchmarks/runs/", {"version": version, "method": "bm25-lemma", "seed": 2**40},
                             format="json"), "seed must be an integer between 0 and 2147483647")


@pytest.mark.parametrize("encoding", ["json", "form", "multipart"])
def test_deep_nesting_in_a_json_field_is_refused_in_every_body_encoding(demo, encoding):
    from benchmarks.models import BenchmarkVersion
    from workbench.models import Document

    researcher = demo["researcher"]
    version = BenchmarkVersion.objects.filter(awaiting_approval=False).order_by("pk").first().pk
    docs = list(Document.objects.order_by("pk").values_list("pk", flat=True)[:2])
    bodies = [("/api/v1/benchmarks/runs/", {"version": version, "method": "bm25-lemma", "params": DEEP}),
              ("/api/v1/workbench/runs/", {"query_document": docs[0], "source_document": docs[-1],
                                           "retriever": "bm25-lemma", "thresholds": DEEP}),
              ("/api/v1/models/", {"version": version, "kind": "feature-classifier", "method": "feature-logreg",
                                   "name": "deep", "retriever_params": DEEP})]
    for url, body in bodies:
        if encoding == "json":  # the whole body nested: the parser's sentence
            response = researcher.post(url, json.dumps(body).replace(json.dumps(DEEP), DEEP),
                                       content_type="application/json")
        elif encoding == "form":
            from urllib.parse import urlencode

            response = researcher.post(url, urlencode(body), content_type="application/x-www-form-urlencoded")
        else:
            response = researcher.post(url, body, format="multipart")
        _refused(response, "nested too deeply")


def test_a_page_form_reads_json_through_the_guarded_reader(demo, client):
    from django.contrib.auth import get_user_model

    from benchmarks.models import BenchmarkVersion

    version = BenchmarkVersion.objects.filter(awaiting_approval=False).order_by("pk").first().pk
    client.force_login(get_user_model().objects.get(username="researcher"))
    for params, words in ((DEEP, "nested too deeply"), ('{"k1": 1e400}', "finite")):
        response = client.post(f"/benchmarks/versions/{version}/", {"method": "bm25-lemma", "params": params,
                                                                    "ks": "1, 10", "n_folds": 5, "seed": 0})
        assert response.status_code in (200, 400) and words in response.content.decode()


def test_the_fuzzer_short_form_finds_no_server_error(demo):
    """The full form (>= 20,000 requests) is perf/fuzz_api.py, its figures in perf/expected/security/fuzz_api.yaml."""
    figures = fuzz_api.fuzz(600, seed=40, log=lambda line: None)
    assert figures["requests"] >= 600 and figures["operations"] > 50
    answered = {code[0] for code, n in figures["statuses"].items() if n}
    assert {"2", "4"} <= answered  # requests got through, and were refused
    assert figures["errors"] == []


def _json_choice_fields() -> list[tuple[str, str, str]]:
    """(method, path, field) of every choice (enum) field of every JSON request body, read from the OpenAPI schema
    drf-spectacular builds from the serializers and the URL conf: a new choice field is tried without a word here."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)

    def resolve(node: dict) -> dict:
        while "$ref" in node or len(node.get("allOf", ())) == 1:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]] if "$ref" in node \
                else node["allOf"][0]
        return node

    found = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            for name, prop in resolve(body["schema"]).get("properties", {}).items() if body else ():
                if any("enum" in resolve(p) for p in [prop, *prop.get("oneOf", ())]):
                    found.append((method, path, name))
    return found


def test_a_lone_surrogate_in_every_json_choice_field_is_a_400_naming_the_field(demo):
    """Issue 45: "\\ud800" in a choice field was a 500 (its error message echoed the value, which no encoding
    writes). Every choice field of every JSON body, as staff, on objects that exist."""
    from django.contrib.auth.models import User

    from annotation.models import Batch, Project
    from workbench.models import Candidate, DetectionRun, DocumentSegment

    segment = DocumentSegment.objects.order_by("pk").first()  # a candidate for the verdict (the demo runs no job)
    run = DetectionRun.objects.create(query_document=segment.document, source_document=segment.document,
                                      retriever="bm25-lemma", owner=User.objects.get(username="admin"))
    candidate = Candidate.objects.create(run=run, query=segment, source=segment, query_position=0, rank=1, score=1.0)
    ids = {"projects": Project.objects.filter(owner__username="lead").order_by("pk").first().pk,
           "batches": Batch.objects.order_by("pk").first().pk, "candidates": candidate.pk}
    fields = _json_choice_fields()
    assert {"split", "pool", "overlap_mode", "status", "format", "calibration", "kind", "decision", "role"} <= \
        {name for _, _, name in fields}
    for method, path, name in fields:
        parts = path.split("/")
        url = "/".join(str(ids.get(parts[i - 1], "default")) if p.startswith("{") else p for i, p in enumerate(parts))
        response = getattr(demo["staff"], method)(url, json.dumps({name: "\ud800"}), content_type="application/json")
        assert response.status_code == 400, (method, url, response.status_code, response.content[:200])
        assert response.json()[name] == ["the value holds a lone UTF-16 surrogate (U+D800), not a character; no field "
                                         "accepts one."], (method, url)
