"""GET /api/v1/methods/ and /api/v1/methods/<name>/: the method registry, read-only, in the OpenAPI schema."""
import pytest
import yaml

from detection.methods import registry


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["annotator", "lead", "researcher", "norole"])
def test_every_signed_in_user_reads_the_whole_registry(client_for, role):
    response = client_for(role).get("/api/v1/methods/")
    assert response.status_code == 200
    page = response.json()  # the one page shape (core.pagination); the registry fits one page
    rows = page["results"]
    assert page["count"] == len(registry.names()) and page["pages"] == 1 and page["next"] is None
    assert [r["name"] for r in rows] == registry.names()
    bm25 = next(r for r in rows if r["name"] == "bm25-lemma")
    assert bm25["kind"] == "retriever" and bm25["languages"] == ["la"] and bm25["needs_gpu"] is False
    assert bm25["supervised"] is False and bm25["queue"] == "cpu"
    k1 = next(p for p in bm25["params"] if p["name"] == "k1")
    assert k1 == {"name": "k1", "type": "float", "default": 1.5, "help": "BM25 term-frequency saturation",
                  "min": 0.0, "max": 10.0}
    st = next(r for r in rows if r["name"] == "sentence_transformer")
    assert st["needs_gpu"] is True and st["queue"] == "gpu" and st["languages"] == ["grc"]
    device = next(p for p in st["params"] if p["name"] == "device")
    assert device["type"] == "choice" and device["choices"] == ["auto", "cpu", "cuda"]


@pytest.mark.django_db
def test_filters_detail_and_refusals(client_for):
    client = client_for("annotator")
    greek = client.get("/api/v1/methods/?kind=pair_scorer&language=grc").json()["results"]
    assert {r["name"] for r in greek} == set(registry.names(kind="pair_scorer", language="grc"))
    assert all(r["kind"] == "pair_scorer" for r in greek) and "levenshtein" in {r["name"] for r in greek}
    assert {r["name"] for r in client.get("/api/v1/methods/?language=la").json()["results"]} == set(registry.names(language="la"))
    detail = client.get("/api/v1/methods/tesserae/").json()
    assert detail == registry.get_spec("tesserae").as_dict()
    bad = client.get("/api/v1/methods/?kind=bogus")
    assert bad.status_code == 400 and "kind" in bad.json()
    assert client.get("/api/v1/methods/?language=xx").status_code == 400
    missing = client.get("/api/v1/methods/nope/")
    assert missing.status_code == 404 and "unknown method 'nope'" in missing.json()["detail"]
    assert client_for(None).get("/api/v1/methods/").status_code in (401, 403)
    assert client.post("/api/v1/methods/", {}, format="json").status_code == 405


@pytest.mark.django_db
def test_methods_api_is_in_the_openapi_schema(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    listing = schema["paths"]["/api/v1/methods/"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"kind", "language"}
    assert "/api/v1/methods/{name}/" in schema["paths"]
    method = schema["components"]["schemas"]["MethodOutput"]["properties"]
    assert {"name", "kind", "languages", "supervised", "needs_gpu", "params"} <= set(method)
    param = schema["components"]["schemas"]["ParamOutput"]["properties"]
    assert {"type", "default", "min", "max", "choices"} <= set(param)
