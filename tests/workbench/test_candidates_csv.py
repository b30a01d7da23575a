"""`?format=csv` wherever a list is exportable (issue 27): the workbench's candidates gave a 404. Every filtered
candidate, one row each, the same columns as the JSON with the verdicts as `user=decision`; and the JSON list has
the one page shape (count, page, pages, page_size, next, previous, results)."""
import csv
import io

import pytest

from workbench.models import Candidate
from workbench.services import verdict_set

pytestmark = pytest.mark.django_db


def test_candidates_as_csv_and_the_one_page_shape(client_for, finished_detection, users):
    run = finished_detection
    first = Candidate.objects.filter(run=run).order_by("query_position", "rank", "id").first()
    verdict_set(candidate=first, user=users["researcher"], decision="cit.")
    client = client_for("researcher")
    url = f"/api/v1/workbench/runs/{run.pk}/candidates/"
    response = client.get(url + "?format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8"))))
    assert len(rows) == Candidate.objects.filter(run=run).count() == client.get(url).json()["count"]
    assert rows[0]["id"] == str(first.pk) and rows[0]["verdicts"] == f"{users['researcher'].username}=cit."
    assert rows[0]["query_id"] == first.query.seg_id and float(rows[0]["score"]) == pytest.approx(first.score)
    filtered = list(csv.DictReader(io.StringIO(client.get(url + "?format=csv&verdict=cit.").content.decode())))
    assert [r["id"] for r in filtered] == [str(first.pk)]
    page = client.get(url + "?page_size=5&page=2").json()
    assert set(page) == {"count", "page", "pages", "page_size", "next", "previous", "results"}
    assert page["page"] == 2 and page["page_size"] == 5 and "page=1" in page["previous"]
    assert (page["next"] is None) == (page["pages"] == 2)


def test_the_candidate_pages_are_core_pagination_pages_in_their_own_order(client_for, finished_detection, users):
    """The list pages through `core.pagination` (its schema, `page_size` bounds and links) and keeps its own
    orders: walking `next` over pages of 7 by score gives the whole run by score, each row with its verdicts."""
    from tests.core.test_schema_describes_responses import _Checker

    run = finished_detection
    best = Candidate.objects.filter(run=run).order_by("-score", "query_position", "rank", "id").first()
    verdict_set(candidate=best, user=users["researcher"], decision="cf.")
    client = client_for("researcher")
    check = _Checker(client.get("/api/schema/?format=json").json())
    path = "/api/v1/workbench/runs/{id}/candidates/"
    url = f"/api/v1/workbench/runs/{run.pk}/candidates/"
    walked, page = [], check("get", path, client.get(url + "?order=score&page_size=7"))
    while True:
        walked += page["results"]
        if not page["next"]:
            break
        page = check("get", path, client.get(page["next"]))
    assert page["pages"] == -(-Candidate.objects.filter(run=run).count() // 7) and page["page"] == page["pages"]
    whole = client.get(url + "?order=score&page_size=500").json()["results"]
    by_score = list(Candidate.objects.filter(run=run).order_by("-score", "query_position", "rank", "id")
                    .values_list("id", flat=True))
    assert [r["id"] for r in walked] == [r["id"] for r in whole] == by_score and len(by_score) > 7
    assert walked[0]["verdicts"][0]["decision"] == "cf." and all(not r["verdicts"] for r in walked[1:])
    by_query = client.get(url + "?page_size=500").json()["results"]
    assert [r["id"] for r in by_query] == list(Candidate.objects.filter(run=run).order_by(
        "query_position", "rank", "id").values_list("id", flat=True))
    too_big = client.get(url + "?page_size=501")
    assert too_big.status_code == 400 and "page_size" in too_big.json()
    assert client.get(url).json()["page_size"] == 50  # the list's own default, as before
