"""Property: whatever a client sends — any query parameter of any URL, any JSON body, any import
file — the answer is a success or a 4xx with a message, never a 500, and a refused request leaves
the database as it was (issue 10 §4).

The URLs come from the URL conf, the parameter and body field names from the OpenAPI schema plus
the pages' own names, so a new endpoint or parameter is covered without editing this file. Values
mix hostile strings (non-ASCII digits, 5,000-digit and 10**25 numbers, dates that leave year 1..9999
in UTC, NUL, long text) with real ids, so requests also reach the code behind the validation.
Examples are derandomised: the counts printed at the end of the run are the same every time."""
import io
import json
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.importing import VerseFileError, parse_verse_file
from annotation.models import Verse
from tests.core.url_routes import url_routes

pytestmark = pytest.mark.django_db

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.large_base_example])

# Names the pages read besides those in the OpenAPI schema (dashboard ?batch=, leaderboards ?sort=,
# and the fields of the lead's forms).
PAGE_NAMES = ["batch", "sort", "page", "table", "name", "title", "set_size", "overlap_per_set", "overlap_mode",
              "session_minutes", "instructions", "username", "role", "reference_id", "candidate_ids", "all_others",
              "pilot", "status", "n_items", "strengths_sd", "noise", "n_annotators", "target", "n_reps",
              "create_batches", "method", "params", "ks", "split", "n_folds", "seed", "gold_set", "calibration",
              "version", "reranker", "kind", "queue", "next"]

HOSTILE = ["²", "٣", "1²", "１２", "-1", "0", "+5", " 5", "5 ", "1e3", "0x10", "nan", "inf", "-0", "9" * 20,
           "9" * 5000, str(10**25), str(2**63), str(2**63 - 1), str(-(2**63)), str(2**31), "1.5", "",
           "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "9999-12-31", "2026-02-30", "2026-13-01",
           "2026-05-01T25:00", "2026-05-01T12:00:00+25:00", "\x00", "a\x00b", "true", "null", "[]", "{}", "%",
           "../../etc/passwd", "<script>alert(1)</script>", "'; DROP TABLE x; --", "csv", "json", "api", "1,2",
           "x" * 300, "open", "closed", "bogus", "annotator", "lead", "file", "grouped", "recall@10", "spearman"]

text_values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _routes():
    """(path pattern, view) of every URL except the admin site, the schema and static docs."""
    skip = ("/admin/", "/api/schema/", "/api/docs/", "/api/redoc/", "/logout/")
    return sorted(route for route, _ in url_routes() if not route.startswith(skip))


def _schema():
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def _schema_names(schema) -> tuple[dict[str, list[str]], list[str]]:
    """({GET path: its query parameter names}, request body field names over all operations)."""
    query, body = {}, set()
    components = schema.get("components", {}).get("schemas", {})
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            if method == "get":
                query[path] = sorted(p["name"] for p in op.get("parameters", []) if p["in"] == "query")
            for content in op.get("requestBody", {}).get("content", {}).values():
                ref = content.get("schema", {}).get("$ref", "")
                body.update(components.get(ref.rsplit("/", 1)[-1], {}).get("properties", {}))
    return query, sorted(body)


def _schema_path(route: str) -> str:
    """'/api/v1/projects/<int:pk>/' → '/api/v1/projects/{id}/' (drf-spectacular's spelling)."""
    return re.sub(r"<int:pk>", "{id}", route)


def _url(route: str, ids: dict, draw) -> str:
    """Fill each <int:…>/<str:…> with a real id of the right kind, or a hostile one."""
    parts = route.split("/")
    for i, part in enumerate(parts):
        if part.startswith("<"):
            real = ids.get(parts[i - 1], ids["any"])
            parts[i] = str(draw(st.sampled_from([real, real, 0, 2**31, 2**63 - 1])) if part.startswith("<int")
                           else draw(st.sampled_from(["per_query", "summary", "x", "%C2%B2"])))
        elif "<" in part:  # e.g. <str:table>.csv
            parts[i] = part.replace(part[part.index("<"): part.index(">") + 1], draw(st.sampled_from(["per_query", "x"])))
    return "/".join(parts)


def _ids(world) -> dict:
    return {"projects": world["project"].pk, "batches": world["batch"].pk, "annotate": world["batch"].pk,
            "sets": world["set"].pk, "versions": world["version"].pk, "gold-sets": world["gold_set"].pk,
            "runs": 1, "similarity-runs": 1, "pilots": 1, "jobs": 1, "from-batch": world["batch"].pk, "any": 1}


def _check(response, before, counts, label) -> None:
    """A success, or a 4xx with a message that changed nothing; never a 500."""
    assert response.status_code < 500, (label, response.status_code)
    if 400 <= response.status_code < 500:
        if response.status_code == 405:  # Django's require_POST answers with the Allow header, no body
            assert response["Allow"], (label, "a 405 without Allow")
        else:
            assert response.content.strip(), (label, "a 4xx without a message")
        if response.get("Content-Type", "").startswith("application/json"):
            assert response.json(), (label, "an empty error body")
        assert counts() == before, (label, "a refused request changed the database")


@pytest.fixture(scope="module")
def names():
    """(query parameter names per GET path, all query names, all body field names)."""
    per_path, body = _schema_names(_schema())
    every = sorted({n for names in per_path.values() for n in names} | set(PAGE_NAMES))
    return per_path, every, sorted(set(body) | set(PAGE_NAMES))


# The hostile values every declared query parameter of every API endpoint is tried with, one by one.
CORE_HOSTILE = ["²", "٣", "-1", "0", "9" * 5000, str(10**25), "0001-01-01T00:00:00+01:00",
                "9999-12-31T23:59:59-01:00", "2026-02-30", "a\x00b", "x" * 300, "1.5"]


def test_every_declared_query_parameter_with_each_hostile_value(world, raw_client_for, counts, names):
    per_path, _, _ = names
    client = raw_client_for("staff")
    ids = _ids(world)
    failures, tried = [], 0
    for route in _routes():
        declared = per_path.get(_schema_path(route), [])
        url = "/".join(str(ids.get(parts[i - 1], 1)) if part == "<int:pk>" else part
                       for parts in [route.split("/")] for i, part in enumerate(parts))
        for name in declared:
            for value in CORE_HOSTILE:
                before = counts()
                response = client.get(url, {name: value})
                tried += 1
                try:
                    _check(response, before, counts, (url, name, value[:20]))
                except AssertionError as exc:
                    failures.append(str(exc)[:300])
    assert tried >= 300
    assert not failures, f"{len(failures)} of {tried}: " + "\n".join(failures[:20])


@given(data=st.data())
@SETTINGS
def test_any_query_parameter_of_any_url(world, raw_client_for, raw_page_client_for, counts, names, data):
    """Any URL with some of its own parameters (or any name the site knows) set to anything."""
    per_path, every, _ = names
    ids = _ids(world)
    route = data.draw(st.sampled_from(_routes()), label="route")
    url = _url(route, ids, data.draw)
    own = per_path.get(_schema_path(route)) or ["batch", "sort", "page", "next"]
    value = st.one_of(st.sampled_from(HOSTILE), text_values, st.integers(-(2**70), 2**70).map(str),
                      st.sampled_from([str(v) for v in ids.values()]))
    param_names = st.one_of(st.sampled_from(own), st.sampled_from(own), st.sampled_from(every))
    params = data.draw(st.dictionaries(param_names, value, min_size=1, max_size=3), label="params")
    client = raw_client_for("staff") if route.startswith("/api/") else raw_page_client_for("staff")
    before = counts()
    _check(client.get(url, params), before, counts, (url, params))


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**80), 2**80), st.floats(allow_nan=False), text_values,
              st.sampled_from(HOSTILE)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text_values, inner, max_size=3)),
    max_leaves=8,
)


@given(data=st.data())
@SETTINGS
def test_any_body_on_any_write_endpoint(world, raw_client_for, raw_page_client_for, counts, names, data):
    """JSON, form and nested bodies with the schema's field names on every POST/PUT/PATCH URL (API
    and pages), as the staff user who may write everywhere."""
    _, _, body_names = names
    ids = _ids(world)
    ids["jobs"] = 10**6  # never run a real job from here
    route = data.draw(st.sampled_from([r for r in _routes() if "<str" not in r and not r.endswith((".csv", ".json"))]),
                      label="route")
    url = _url(route, ids, data.draw)
    real = st.sampled_from([world["assignment"].pk, world["assignment"].pair.verse_a_id, "100 1", "100 2"])
    body = data.draw(st.dictionaries(st.sampled_from(body_names), st.one_of(json_values, real), max_size=5),
                     label="body")
    if route.startswith("/api/"):
        client = raw_client_for("staff")
        method = data.draw(st.sampled_from(["post", "patch", "put"]), label="method")
        deep = data.draw(st.integers(0, 3), label="deep") == 0
        before = counts()
        payload = "[" * 5000 + "]" * 5000 if deep else json.dumps(body)
        response = getattr(client, method)(url, payload, content_type="application/json")
    else:
        client = raw_page_client_for("staff")
        before = counts()
        response = client.post(url, {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()})
    _check(response, before, counts, (url, body))


# --- importers ------------------------------------------------------------------------------------

ids_values = st.one_of(st.sampled_from(["16977 1", "16977 2", "7 ²", "7 ٣", "7 " + "9" * 20, "7 " + "9" * 5000,
                                        "x" * 65, "x" * 100, "", " ", "a\x00b", "1 1", "1 2"]),
                       st.builds(lambda a, b: f"{a} {b}", st.integers(0, 10**6), st.integers(0, 10**12)),
                       text_values)
cell_values = st.one_of(text_values, st.sampled_from(HOSTILE), st.just("α" * 131_073), st.just('"unclosed'))


@st.composite
def verse_files(draw) -> tuple[str, bytes]:
    """CSV/TSV in the three layouts, or JSON with values of every type (and sometimes very deep)."""
    kind = draw(st.sampled_from(["generic", "tsv", "sample", "sts", "json", "json-doc", "bytes"]))
    n = draw(st.integers(1, 6))
    if kind == "bytes":
        return "raw.csv", draw(st.binary(max_size=200))
    if kind.startswith("json"):
        record = st.one_of(
            st.fixed_dictionaries({"verse_id": st.one_of(ids_values, json_values), "text": st.one_of(cell_values, json_values)},
                                  optional={"translation": json_values, "occurrence": json_values,
                                            "type": json_values, "group": json_values}),
            json_values)
        verses = draw(st.lists(record, min_size=1, max_size=n))
        if kind == "json":
            return "v.json", json.dumps(verses).encode()
        batches = draw(st.one_of(json_values, st.lists(st.fixed_dictionaries(
            {"reference": st.one_of(ids_values, json_values), "candidates": st.lists(st.one_of(ids_values, json_values), max_size=4)}),
            max_size=2)))
        doc = {"verses": verses, "batches": batches}
        if draw(st.integers(0, 5)) == 0:
            doc["verses"] = [json.loads("[" * 200 + "]" * 200)]
        return "v.json", json.dumps(doc).encode()
    header = {"generic": ["verse_id", "text", "translation", "occurrence"], "tsv": ["verse_id", "text"],
              "sample": ["id", "idoriginal_poem", "order", "verse", "type_id", "idgroup"],
              "sts": ["verse1_id", "verse2_id", "verse1", "verse2", "normalized_counts"]}[kind]
    rows = []
    for _ in range(n):
        row = [draw(ids_values) if h.endswith("_id") or h in ("idoriginal_poem", "order") else draw(cell_values)
               for h in header]
        if draw(st.integers(0, 6)) == 0:
            row.append("extra")
        rows.append(row)
    sep = "\t" if kind == "tsv" else ","
    out = io.StringIO()
    import csv

    writer = csv.writer(out, delimiter=sep)
    writer.writerow(header)
    writer.writerows(rows)
    return f"f.{'tsv' if kind == 'tsv' else 'csv'}", out.getvalue().encode()


@given(upload=verse_files())
@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_the_parser_accepts_or_names_the_problem(upload):
    """No database: any bytes give a parsed file or a VerseFileError naming the file."""
    name, content = upload
    try:
        parsed = parse_verse_file(content, name)
    except VerseFileError as exc:
        assert str(exc).startswith(name), str(exc)
        return
    for verse in parsed.verses:
        assert verse.verse_id and verse.text.strip() and "\x00" not in verse.text + verse.verse_id
        assert len(verse.verse_id) <= 64 and len(verse.occurrence_id) <= 32


@given(upload=verse_files())
@SETTINGS
def test_any_import_file_over_http(world, raw_client_for, counts, upload):
    name, content = upload
    before = counts()
    stream = io.BytesIO(content)
    stream.name = name
    response = raw_client_for("lead").post(f"/api/v1/projects/{world['project'].pk}/verses/import/",
                                           {"file": stream}, format="multipart")
    _check(response, before, counts, (name, content[:200]))
    if response.status_code == 400:
        body = response.json()
        if "detail" in body:  # the importer's message names the file
            assert body["detail"].startswith(name)
        else:  # refused by the upload field itself (e.g. an empty file), with its own message
            assert body.get("file"), body
    if response.status_code == 201:
        for verse in Verse.objects.filter(project=world["project"]):
            assert verse.text.strip() and verse.text not in ("None", "null") and "\x00" not in verse.text
            assert len(verse.verse_id) <= 64 and len(verse.occurrence_id) <= 32


def test_model_widths_match_the_importer():
    from annotation.importing import FIELD_MAX_CHARS

    assert FIELD_MAX_CHARS == {name: Verse._meta.get_field(name).max_length for name in FIELD_MAX_CHARS}


def test_every_query_parameter_name_is_tried(names):
    """The schema's parameters (export filters, n_boot, fold, page, …) are all among the names drawn,
    and every API path of the URL conf is found in the schema."""
    per_path, every, _ = names
    assert {"batch", "n_boot", "fold", "since", "until", "page", "format", "table", "annotator"} <= set(every)
    assert all(set(name) <= set(string.ascii_lowercase + "_") for name in every)
    api_gets = [r for r in _routes() if r.startswith("/api/v1/") and _schema_path(r) in per_path]
    assert len(api_gets) >= 25
