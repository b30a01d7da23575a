"""The verse search behind the batch form's picker: the one page shape, ids beginning with the query first, the
project's leads only, described in the API schema."""
import pytest

from annotation.models import Verse

pytestmark = pytest.mark.django_db


@pytest.fixture
def many_verses(small_project):
    project, _ = small_project
    Verse.objects.bulk_create([Verse(project=project, verse_id=f"{k} 1", text=f"κείμενο {k}") for k in range(200, 260)]
                              + [Verse(project=project, verse_id="9 9", text="ἔχει 100 μέσα")])
    return project


def test_search_pages_in_the_one_shape_with_ids_that_begin_with_the_query_first(page_client, many_verses):
    project = many_verses
    client = page_client(project.owner)
    url = f"/api/v1/projects/{project.pk}/verses/search/"
    body = client.get(url, {"q": "100", "page_size": 3}).json()
    assert set(body) == {"count", "page", "pages", "page_size", "next", "previous", "results"}
    assert body["count"] == 7 and body["pages"] == 3 and body["page_size"] == 3  # 100 0 … 100 5, and 9 9 by its text
    assert [v["verse_id"] for v in body["results"]] == ["100 0", "100 1", "100 2"]
    assert set(body["results"][0]) == {"id", "verse_id", "text"}
    last = client.get(url, {"q": "100", "page_size": 3, "page": 3}).json()
    assert [v["verse_id"] for v in last["results"]] == ["9 9"] and last["next"] is None
    assert client.get(url, {"q": "κείμενο 25"}).json()["count"] == 10
    assert client.get(url).json()["count"] == 67  # empty: every verse
    too_long = client.get(url, {"q": "x" * 201})
    assert too_long.status_code == 400 and "q" in too_long.json()
    assert client.get(url, {"page_size": 0}).status_code == 400


def test_only_the_projects_leads_search_its_verses(page_client, many_verses, annotators, make_user):
    project = many_verses
    url = f"/api/v1/projects/{project.pk}/verses/search/"
    assert page_client(annotators[0]).get(url).status_code == 403
    assert page_client(make_user("stranger-lead", "lead")).get(url).status_code in (403, 404)


def test_the_schema_describes_the_search(client_for):
    schema = client_for("researcher").get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/projects/{id}/verses/search/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"q", "page", "page_size"}
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    page = schema["components"]["schemas"][ref]
    assert {"count", "page", "pages", "page_size", "results"} <= set(page["required"])
    item = page["properties"]["results"]["items"]["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][item]["properties"]) == {"id", "verse_id", "text"}
