"""Bad input gets a 4xx naming the problem, never a 500, and stores nothing (issue 10 §4).

Each test here reproduces one input that gave a 500 or was stored wrongly, through the real HTTP
stack (DRF views, Django pages) on the real database."""
import csv
import io
import json
import uuid

import pytest
from django.test import override_settings

from annotation.models import Batch, Judgement, Verse
from tests.core.url_routes import url_routes

pytestmark = pytest.mark.django_db

DEEP = "[" * 10_000 + "]" * 10_000


def _message(response) -> str:
    """The error text of a DRF response, flattened (detail or field errors)."""
    return json.dumps(response.json(), ensure_ascii=False)


def _import(client, project, content: bytes, name: str = "v.csv", **extra):
    upload = io.BytesIO(content)
    upload.name = name
    return client.post(f"/api/v1/projects/{project.pk}/verses/import/", {"file": upload, **extra}, format="multipart")


def _csv(rows, header=("verse_id", "text")) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def _api_routes():
    """(route pattern, view class) of every /api/v1/ URL, from the URL conf."""
    return [(route, cls) for route, cls in url_routes() if route.startswith("/api/v1/") and cls is not None]


def _fill(route: str, world) -> str:
    ids = {"projects": world["project"].pk, "batches": world["batch"].pk, "sets": world["set"].pk,
           "jobs": 1, "versions": world["version"].pk, "runs": 1, "gold-sets": world["gold_set"].pk}
    parts = route.split("/")
    for i, part in enumerate(parts):
        if part == "<int:pk>":
            parts[i] = str(ids.get(parts[i - 1], 1))
    return "/".join(parts)


# --- deep JSON ------------------------------------------------------------------------------------

def test_deep_json_is_a_400_on_every_json_endpoint(world, raw_client_for, counts):
    client = raw_client_for("staff")
    before = counts()
    tried = 0
    for route, cls in _api_routes():
        url = _fill(route, world)
        for method in ("post", "put", "patch"):
            if not hasattr(cls, method):
                continue
            response = getattr(client, method)(url, DEEP, content_type="application/json")
            tried += 1
            assert response.status_code < 500, (method, url, response.status_code)
            if response.status_code == 400:
                assert "nested too deeply" in _message(response), (method, url)
    assert tried >= 8
    assert counts() == before


@pytest.mark.parametrize("url", ["/api/v1/projects/", "/api/v1/judgements/", "/api/v1/benchmarks/runs/",
                                 "/api/v1/sts/runs/"])
def test_deep_json_names_the_problem(world, raw_client_for, url):
    response = raw_client_for("staff").post(url, DEEP, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON nested too deeply (more than 64 levels)."}


def test_moderately_deep_json_is_refused_before_any_view_sees_it(world, raw_client_for):
    body = json.dumps({"name": "deep", "title": "t", "instructions": "x", "extra": [[[[[[[[1]]]]]]]] * 1})
    assert raw_client_for("staff").post("/api/v1/projects/", body, content_type="application/json").status_code == 201
    body = '{"name": "deeper", "extra": ' + "[" * 70 + "]" * 70 + "}"
    response = raw_client_for("staff").post("/api/v1/projects/", body, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["detail"]


def test_deep_json_on_the_anonymous_token_endpoint(db, raw_client_for):
    response = raw_client_for(None).post("/api/v1/auth/token/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


def test_deep_json_import_file(world, raw_client_for, counts):
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], DEEP.encode(), name="deep.json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("deep.json: JSON nested too deeply")
    assert counts() == before


# --- the verse importer -------------------------------------------------------------------------

@pytest.mark.parametrize("batches", [5, None, "x", [5], [{"reference": None, "candidates": ["100 1"]}],
                                     [{"reference": "100 1", "candidates": [None, "100 2"]}]])
def test_import_json_batches_of_the_wrong_type(world, raw_client_for, counts, batches):
    body = {"verses": [{"verse_id": "7 1", "text": "α"}, {"verse_id": "7 2", "text": "β"}], "batches": batches}
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], json.dumps(body).encode(), name="b.json")
    assert response.status_code == 400, response.content
    assert "b.json" in response.json()["detail"] and "batch" in response.json()["detail"]
    assert counts() == before


@pytest.mark.parametrize("record, problem", [
    ({"verse_id": "7 1", "text": None}, "text must be a string"),
    ({"verse_id": "7 1", "text": 5}, "text must be a string"),
    ({"verse_id": None, "text": "α"}, "verse_id must be a string"),
    ({"verse_id": "7 1", "text": "α", "translation": ["x"]}, "translation must be a string"),
    ({"verse_id": "7 1", "text": "α", "occurrence": "x" * 33}, "occurrence_id is 33 characters"),
    ({"verse_id": "x" * 100, "text": "α"}, "verse_id is 100 characters"),
])
def test_import_json_values_that_were_stored_wrongly(world, raw_client_for, counts, record, problem):
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], json.dumps([record]).encode(), name="w.json")
    assert response.status_code == 400, response.content
    assert problem in response.json()["detail"] and "w.json, verse 1" in response.json()["detail"]
    assert counts() == before


@pytest.mark.parametrize("content, problem", [
    (_csv([["7 1", "α\x00β"]]), "line 2: NUL"),
    (_csv([["x" * 100, "α"]]), "line 2: verse_id is 100 characters (at most 64)"),
    (_csv([["7 1", "α", "9" * 40]], header=("verse_id", "text", "occurrence")), "line 2: occurrence_id is 40"),
    (_csv([["1 12345678901234567890", "α"]]), "line 2: verse number '12345678901234567890' is too large"),
    (_csv([["1 " + "9" * 5000, "α"]]), "line 2: verse number '99999"),
    (_csv([["7 1", "α" * 131_073]]), "line 2: a field is longer than 131,072 characters"),
    (b"idoriginal_poem,order,verse\n7,\xc2\xb2,\xce\xb1\n", "line 2: order '\u00b2' is not a whole number"),
    (b"idoriginal_poem,order,verse\n7," + b"9" * 5000 + b",\xce\xb1\n", "line 2: order '99999"),
    (b"idoriginal_poem,order,verse\n" + b"9" * 40 + b",1,\xce\xb1\n", "line 2: occurrence_id is 40 characters"),
    (b"verse1_id,verse2_id,verse1,verse2,normalized_counts\n1 1,1 2,\xce\xb1,\xce\xb2," + b"9" * 5000 + b"\n",
     "line 2: normalized_counts"),
])
def test_import_csv_values_that_gave_500s_or_were_stored(world, raw_client_for, counts, content, problem):
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], content, name="f.csv")
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith("f.csv, ") and problem in response.json()["detail"], response.json()
    assert counts() == before


def test_superscript_digit_is_not_a_verse_number(world, raw_client_for):
    response = _import(raw_client_for("lead"), world["project"], _csv([["7 \u00b2", "α"]]), name="s.csv")
    assert response.status_code == 201, response.content
    verse = Verse.objects.get(project=world["project"], verse_id="7 \u00b2")
    assert verse.verse_number is None and verse.occurrence_id == ""


def test_json_number_with_5000_digits(world, raw_client_for, counts):
    before = counts()
    body = b'[{"verse_id": "7 1", "text": "\xce\xb1", "occurrence": ' + b"9" * 5000 + b"}]"
    response = _import(raw_client_for("lead"), world["project"], body, name="n.json")
    assert response.status_code == 400 and "n.json" in response.json()["detail"]
    assert counts() == before


# --- limits ---------------------------------------------------------------------------------------

@override_settings(SIMILIA_MAX_UPLOAD_BYTES=1000)
def test_upload_over_the_size_limit(world, raw_client_for, counts):
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], _csv([[f"8 {k}", "α" * 50] for k in range(40)]))
    assert response.status_code == 413
    assert "the limit is 1,000 bytes" in response.json()["detail"] and "SIMILIA_MAX_UPLOAD_MB" in response.json()["detail"]
    assert counts() == before


def test_default_upload_limit_is_20_mb():
    from django.conf import settings

    assert settings.SIMILIA_MAX_UPLOAD_BYTES == 20 * 1024 * 1024


@override_settings(SIMILIA_IMPORT_MAX_ROWS=10)
def test_rows_over_the_limit(world, raw_client_for, counts):
    before = counts()
    response = _import(raw_client_for("lead"), world["project"], _csv([[f"8 {k}", "α"] for k in range(11)]))
    assert response.status_code == 400
    assert response.json()["detail"] == "v.csv, line 12: more than 10 rows; the limit is 10 rows per file."
    assert counts() == before
    body = json.dumps([{"verse_id": f"8 {k}", "text": "α"} for k in range(11)]).encode()
    response = _import(raw_client_for("lead"), world["project"], body, name="v.json")
    assert response.status_code == 400 and "more than 10 verses" in response.json()["detail"]
    assert counts() == before


def test_columns_over_the_limit(world, raw_client_for, counts):
    before = counts()
    header = ["verse_id", "text"] + [f"c{k}" for k in range(100)]
    response = _import(raw_client_for("lead"), world["project"], _csv([["8 1", "α"] + [""] * 100], header=header))
    assert response.status_code == 400
    assert response.json()["detail"] == "v.csv, line 1: 102 columns; the limit is 50."
    assert counts() == before


@override_settings(SIMILIA_MAX_BATCH_PAIRS=10)
def test_batch_over_the_pair_limit_is_refused(world, raw_client_for, counts):
    from annotation.services.projects import verses_import

    verses_import(project=world["project"], data=_csv([[f"9 {k}", f"v{k}"] for k in range(7)]), filename="x.csv")
    before = counts()
    response = raw_client_for("lead").post(f"/api/v1/projects/{world['project'].pk}/batches/",
                                           {"reference_id": "9 0", "candidate_ids": [f"9 {k}" for k in range(1, 7)]},
                                           format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == ("A batch of 6 candidates has 15 pairs; the limit is 10 pairs per batch "
                                         "(5 candidates). Split the candidates into several batches.")
    assert counts() == before
    # the same limit applies to batches defined in an imported file, and the import stays all or nothing
    body = {"verses": [{"verse_id": f"6 {k}", "text": f"w{k}"} for k in range(7)],
            "batches": [{"reference": "6 0", "candidates": [f"6 {k}" for k in range(1, 7)]}]}
    response = _import(raw_client_for("lead"), world["project"], json.dumps(body).encode(), name="b.json")
    assert response.status_code == 400 and "the limit is 10 pairs per batch" in response.json()["detail"]
    assert counts() == before


@override_settings(SIMILIA_MAX_BATCH_PAIRS=10)
def test_batch_page_form_over_the_pair_limit(world, raw_page_client_for, counts):
    from annotation.services.projects import verses_import

    verses_import(project=world["project"], data=_csv([[f"9 {k}", f"v{k}"] for k in range(7)]), filename="x.csv")
    client = raw_page_client_for("lead")
    before = counts()
    response = client.post(f"/projects/{world['project'].pk}/batches/new/",
                           {"reference_id": "9 0", "all_others": "1"}, follow=True)
    assert response.status_code == 200
    assert "the limit is 10 pairs per batch" in response.content.decode()
    assert counts() == before


# --- query parameters -----------------------------------------------------------------------------

@pytest.mark.parametrize("path, query, param", [
    ("/api/v1/projects/{p}/judgements/", "batch=%C2%B2", "batch"),
    ("/api/v1/projects/{p}/judgements/", "batch=" + "9" * 5000, "batch"),
    ("/api/v1/projects/{p}/judgements/", f"batch={10**25}", "batch"),
    ("/api/v1/projects/{p}/scores/", "batch=%C2%B2", "batch"),
    ("/api/v1/projects/{p}/scores/", "n_boot=%C2%B2", "n_boot"),
    ("/api/v1/projects/{p}/scores/", "n_boot=" + "9" * 5000, "n_boot"),
    ("/api/v1/projects/{p}/scores/", "n_boot=2001", "n_boot"),
    ("/api/v1/projects/{p}/agreement/", f"batch={10**25}", "batch"),
    ("/api/v1/projects/{p}/judgements/", "until=0001-01-01T00:00:00%2B01:00", "until"),
    ("/api/v1/projects/{p}/judgements/", "since=9999-12-31T23:59:59-01:00", "since"),
    ("/api/v1/projects/{p}/judgements/", "since=2026-02-30", "since"),
    ("/api/v1/projects/{p}/agreement/", "until=0001-01-01T00:00:00%2B01:00", "until"),
    ("/api/v1/batches/{b}/scores/", "since=0001-01-01T00:00:00%2B01:00", "since"),
    ("/api/v1/benchmarks/versions/{v}/gold/", "fold=%C2%B2", "fold"),
    ("/api/v1/benchmarks/versions/{v}/gold/", "fold=" + "9" * 5000, "fold"),
    ("/api/v1/benchmarks/versions/{v}/gold/", "fold=99999", "fold"),
])
def test_query_parameters_are_checked(world, raw_client_for, path, query, param):
    url = path.format(p=world["project"].pk, b=world["batch"].pk, v=world["version"].pk) + "?" + query
    response = raw_client_for("staff").get(url)
    assert response.status_code == 400, (url, response.status_code)
    assert param in response.json(), response.json()


@pytest.mark.parametrize("query", ["until=9999-12-31", "since=0001-01-01", "until=9999-12-31T23:59:59.999999Z",
                                   f"batch={2**63 - 1}", "n_boot=0"])
def test_extreme_but_valid_parameters_succeed(world, raw_client_for, query):
    response = raw_client_for("staff").get(f"/api/v1/projects/{world['project'].pk}/scores/?{query}")
    assert response.status_code == 200, response.content


def test_until_a_date_still_includes_the_whole_day(world, raw_client_for):
    day = Judgement.objects.get().created.date().isoformat()
    rows = raw_client_for("staff").get(f"/api/v1/projects/{world['project'].pk}/judgements/?until={day}").json()
    assert rows["count"] == 1
    rows = raw_client_for("staff").get(f"/api/v1/projects/{world['project'].pk}/judgements/?since={day}T23:59:59.999999%2B00:00").json()
    assert rows["count"] == 0


# --- judgements and batch status ----------------------------------------------------------------

@pytest.mark.parametrize("response_ms", [10**19, 10**12, 86_400_001, -1])
def test_response_time_out_of_range(world, raw_client_for, counts, response_ms):
    before = counts()
    assignment = world["assignment"]
    response = raw_client_for("annotator").post("/api/v1/judgements/", {
        "assignment_id": assignment.pk, "chosen_verse": assignment.pair.verse_a_id, "client_uuid": str(uuid.uuid4()),
        "response_ms": response_ms}, format="json")
    assert response.status_code == 400 and "response_ms" in response.json()
    assert counts() == before


def test_response_time_of_a_day_is_kept(world, raw_client_for):
    assignment = world["assignment"]
    response = raw_client_for("annotator").post("/api/v1/judgements/", {
        "assignment_id": assignment.pk, "chosen_verse": assignment.pair.verse_a_id, "client_uuid": str(uuid.uuid4()),
        "response_ms": 86_400_000}, format="json")
    assert response.status_code == 201 and response.json()["response_ms"] == 86_400_000


def test_batch_status_page_with_a_bogus_status(world, raw_page_client_for):
    batch = world["batch"]
    response = raw_page_client_for("lead").post(f"/projects/{world['project'].pk}/batches/{batch.pk}/status/", {"status": "bogus"},
                           follow=True)
    assert response.status_code == 400  # the page again, the form's error shown (annotation.forms.BatchStatusForm)
    assert "bogus is not one of the available choices" in response.content.decode()
    assert Batch.objects.get(pk=batch.pk).status == "open"


# --- NUL characters (PostgreSQL cannot store them; SQLite stored them as they came) ---------------

def test_nul_in_a_query_parameter(world, raw_client_for):
    response = raw_client_for("staff").get(f"/api/v1/projects/{world['project'].pk}/judgements/",
                                           {"annotator": "ann\x00"})
    assert response.status_code == 400
    assert response.json() == {"detail": "The query parameter 'annotator' contains a NUL character (U+0000); "
                                         "no field accepts one."}


def test_nul_in_a_page_form_stores_nothing(world, raw_page_client_for, counts):
    client = raw_page_client_for("lead")
    before = counts()
    response = client.post("/projects/new/", {"name": "nul", "title": "a\x00b"})
    assert response.status_code == 400 and b"'title' contains a NUL character" in response.content
    assert counts() == before


@pytest.mark.parametrize("char, problem", [("\x00", "a NUL character (U+0000)"),
                                           ("\ud800", "a lone UTF-16 surrogate (U+D800)")])
def test_nul_or_a_surrogate_in_a_json_body_or_an_import_names_its_place(world, raw_client_for, counts, char, problem):
    before = counts()
    response = raw_client_for("staff").post("/api/v1/benchmarks/runs/", json.dumps({  # escaped: "\\ud800"
        "version": world["version"].pk, "method": "bm25-lemma", "params": {"k1": f"a{char}"}}),
        content_type="application/json")
    assert response.status_code == 400
    assert response.json()["params"][0].startswith(f"k1: the value holds {problem}")
    record = [{"verse_id": "7 1", "text": f"α{char}β"}]
    response = _import(raw_client_for("lead"), world["project"], json.dumps(record).encode(), name="w.json")
    assert response.status_code == 400 and response.json()["detail"].startswith(f"w.json: [0].text: the value holds "
                                                                                f"{problem}")
    assert counts() == before
