"""One page shape everywhere (issue 27): every API list answers `core/pagination.py`'s
`{count, page, pages, page_size, next, previous, results}` honouring `?page_size`, says so in the schema, and a
list that is exportable also answers `?format=csv` with every row. `me/batches` (a plain list until now) is checked
on real batches, its answers validated against its own schema."""
import csv
import io

import pytest

from tests.core.test_schema_describes_responses import _Checker

pytestmark = pytest.mark.django_db
PAGE_KEYS = {"count", "page", "pages", "page_size", "next", "previous", "results"}


@pytest.fixture
def project(users):
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    project = project_create(owner=users["lead"], name="pages", title="t")
    verses_import(project=project, data=b"verse_id,text\n1 1,alpha\n1 2,beta\n1 3,gamma\n1 4,delta\n",
                  filename="v.csv")
    for name in ("b1", "b2", "b3"):
        batch_create(project=project, reference_id="1 1", candidate_ids=["1 2", "1 3", "1 4"], name=name)
    membership_add(project=project, username=users["annotator"].username, role="annotator")
    return project


def test_no_list_in_the_schema_is_a_bare_array(client_for):
    schema = client_for("researcher").get("/api/schema/?format=json").json()
    bare = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            body = operation["responses"].get("200", {}).get("content", {}).get("application/json", {})
            if body.get("schema", {}).get("type") == "array":
                bare.append((method, path))
    assert not bare, f"answer the one page shape (core.pagination): {bare}"


def test_my_batches_are_pages_with_page_size_and_csv(client_for, project):
    annotator = client_for("annotator")
    check = _Checker(client_for("researcher").get("/api/schema/?format=json").json())
    first = check("get", "/api/v1/me/batches/", annotator.get("/api/v1/me/batches/?page_size=2"))
    assert set(first) == PAGE_KEYS and first["count"] == 3 and first["pages"] == 2 and first["page_size"] == 2
    assert [row["batch"] for row in first["results"]] == ["b1", "b2"] and first["previous"] is None
    assert "page=2" in first["next"]
    second = check("get", "/api/v1/me/batches/", annotator.get(first["next"]))
    assert [row["batch"] for row in second["results"]] == ["b3"] and second["next"] is None
    assert {row["n_pairs"] for row in first["results"] + second["results"]} == {3}
    bad = annotator.get("/api/v1/me/batches/?page_size=0")
    assert bad.status_code == 400 and "page_size" in bad.json()
    exported = annotator.get("/api/v1/me/batches/?format=csv&page_size=1")
    assert exported.status_code == 200 and exported["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [r["batch"] for r in rows] == ["b1", "b2", "b3"] and rows[0]["project"] == "pages"


def test_project_batches_and_members_are_pages(client_for, project):
    lead = client_for("lead")
    check = _Checker(client_for("researcher").get("/api/schema/?format=json").json())
    batches = check("get", "/api/v1/projects/{id}/batches/", lead.get(f"/api/v1/projects/{project.pk}/batches/?page_size=1"))
    assert batches["count"] == 3 and batches["pages"] == 3 and len(batches["results"]) == 1
    members = check("get", "/api/v1/projects/{id}/members/", lead.get(f"/api/v1/projects/{project.pk}/members/"))
    assert members["count"] == len(members["results"]) >= 1
    assert "ann" in {m["username"] for m in members["results"]}
    rows = list(csv.DictReader(io.StringIO(lead.get(f"/api/v1/projects/{project.pk}/batches/?format=csv").content
                                           .decode())))
    assert sorted(r["name"] for r in rows) == ["b1", "b2", "b3"]


def test_methods_and_workbench_lists_are_pages(client_for, settings):
    from benchmarks.services import benchmark_import_545
    from detection.methods import registry

    folder = settings.DATA_DIR / "locisimiles"
    loci_version, _ = benchmark_import_545(with_text_path=folder / "pairs_545_with_text.csv",
                                           ref_type_path=folder / "pairs_545_ref_type.csv", name="loci-pages")

    client = client_for("researcher")
    methods = client.get("/api/v1/methods/?page_size=5").json()
    assert methods["count"] == len(registry.names()) and len(methods["results"]) == 5
    assert [m["name"] for m in methods["results"]] == registry.names()[:5]
    corpora = client.get("/api/v1/workbench/corpora/?page_size=1").json()
    assert corpora["count"] == 2 and corpora["pages"] == 2 and len(corpora["results"]) == 1
    rows = list(csv.DictReader(io.StringIO(client.get("/api/v1/workbench/corpora/?format=csv").content.decode())))
    assert {int(r["id"]) for r in rows} == {loci_version.query_corpus_id, loci_version.source_corpus_id}
    for path in ("/api/v1/workbench/documents/", "/api/v1/workbench/runs/"):
        page = client.get(path).json()
        assert set(page) == PAGE_KEYS and page["count"] == 0 and page["results"] == []


def test_exportable_generic_lists_answer_every_row_as_csv(client_for, settings):
    """A ListAPIView list (gold references, trained models, …) pages its JSON and exports every row as CSV, a
    nested value as one JSON cell."""
    import json

    from benchmarks.models import GoldReference
    from benchmarks.services import benchmark_import_545
    from detection.models import TrainedModel

    folder = settings.DATA_DIR / "locisimiles"
    version, _ = benchmark_import_545(with_text_path=folder / "pairs_545_with_text.csv",
                                      ref_type_path=folder / "pairs_545_ref_type.csv", name="loci-csv")
    client = client_for("researcher")
    url = f"/api/v1/benchmarks/versions/{version.pk}/gold/"
    page = client.get(url).json()
    n = GoldReference.objects.filter(version=version).count()
    assert page["count"] == n > page["page_size"] == len(page["results"])
    rows = list(csv.DictReader(io.StringIO(client.get(url + "?format=csv&fold=0").content.decode())))
    assert len(rows) == GoldReference.objects.filter(version=version, fold=0).count() > 0
    assert {r["fold"] for r in rows} == {"0"}
    TrainedModel.objects.create(name="m/fold-0", kind="feature-classifier", method="feature-ltr",
                                metrics={"rerank_mrr@10": 0.5}, train_folds=[1, 2])
    models = list(csv.DictReader(io.StringIO(client.get("/api/v1/models/?format=csv").content.decode())))
    assert [m["name"] for m in models] == ["m/fold-0"]
    assert json.loads(models[0]["metrics"]) == {"rerank_mrr@10": 0.5} and json.loads(models[0]["train_folds"]) == [1, 2]
