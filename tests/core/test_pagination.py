"""One pagination for every API list (core/pagination.py): `?page_size` is honoured (it was ignored outside the
exports), a bad one is a 400 naming it, and every paginated list answers the same keys; the schema says so."""
import pytest

from jobs.models import Job

KEYS = {"count", "page", "pages", "page_size", "next", "previous", "results"}


@pytest.mark.django_db
def test_page_size_is_honoured_and_the_shape_is_one(client_for, users):
    for _ in range(5):
        Job.objects.create(kind="system.sleep", owner=users["researcher"])
    client = client_for("researcher")
    first = client.get("/api/v1/jobs/?page_size=2").json()
    assert set(first) == KEYS
    assert (first["count"], first["page"], first["pages"], first["page_size"], len(first["results"])) == (5, 1, 3, 2, 2)
    last = client.get("/api/v1/jobs/?page_size=2&page=3").json()
    assert len(last["results"]) == 1 and last["next"] is None and "page_size=2" in last["previous"]
    seen = {row["id"] for page in (1, 2, 3) for row in client.get(f"/api/v1/jobs/?page_size=2&page={page}").json()[
        "results"]}
    assert len(seen) == 5
    assert len(client.get("/api/v1/jobs/").json()["results"]) == 5  # the default page (100) holds them all


@pytest.mark.django_db
@pytest.mark.parametrize("value, says", [("0", "between 1 and 1000"), ("1001", "between 1 and 1000"),
                                         ("²", "page_size"), ("ten", "page_size")])
def test_a_bad_page_size_is_a_400_naming_it(client_for, users, value, says):
    response = client_for("researcher").get(f"/api/v1/jobs/?page_size={value}")
    assert response.status_code == 400
    assert "page_size" in str(response.json()) and says in str(response.json())


@pytest.mark.django_db
def test_the_schema_describes_the_page(client_for):
    schema = client_for("researcher").get("/api/schema/?format=json").json()
    listed = schema["components"]["schemas"]
    pages = [body for name, body in listed.items() if name.startswith("Paginated")]
    assert pages and all({"count", "page", "pages", "page_size", "results"} <= set(body["properties"]) for body in pages)
    params = {p["name"]: p for p in schema["paths"]["/api/v1/jobs/"]["get"]["parameters"]}
    assert params["page_size"]["schema"]["maximum"] == 1000
