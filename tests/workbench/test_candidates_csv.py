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
