"""The corpus search through the service, the API, the commands and a job: 404s with a sentence, the query
limits, the stale index's 409, exports, the passage's own work left out, a second build refused."""
import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from detection.models import SearchCorpus
from detection.services import corpora
from jobs.models import Job


@pytest.fixture
def small(db, settings, tmp_path, small_corpus_dir):
    settings.VAR_DIR = tmp_path / "var"
    return corpora.corpus_build(name="small", path=small_corpus_dir)


def test_the_build_lists_skipped_lines_and_stores_the_works(small):
    row = SearchCorpus.objects.get(name="small")
    assert row.status == "ready" and row.n_segments == small["segments"] > 1000 and row.works.count() == 4
    assert row.report["skipped"]["summary"] == "2 lines skipped: 1 not of the form <ref> text, 1 with an empty text"
    assert any("bad.carmen.tess, line 2" in line for line in row.report["skipped"]["lines"])
    assert row.index_bytes > 0 and len(row.digest) == 32


def test_list_detail_search_and_reader(small, client_for):
    client = client_for("annotator")
    rows = client.get("/api/v1/corpora/").json()["results"]
    assert [(r["name"], r["status"]) for r in rows] == [("small", "ready")]
    detail = client.get("/api/v1/corpora/small/").json()
    assert {w["key"] for w in detail["works"]} >= {"vergil.eclogues", "cicero.pro_archia"}
    r = client.get("/api/v1/corpora/small/search/", {"q": "formosam resonare doces Amaryllida silvas", "k": 5})
    assert r.status_code == 200
    body = r.json()
    assert body["excluded_work"] == "vergil.eclogues"  # the typed line is Virgil's own: his work left out
    assert body["hits"] and all(h["work"] != "vergil.eclogues" for h in body["hits"])
    body = client.get("/api/v1/corpora/small/search/", {"q": "formosam resonare doces Amaryllida silvas",
                                                        "include_own": "1", "k": 5}).json()
    top = body["hits"][0]
    assert top["citation"] == "verg. ecl. 1.5" and body["excluded_work"] == ""
    names = [c["name"] for c in top["explanation"]["channels"]]
    assert "lemma" in names and set(top["channels"]) >= {"lemma", "rare", "form", "sound", "semantic"}
    lines = client.get("/api/v1/corpora/small/works/vergil.eclogues/", {"page": 2}).json()
    assert lines["page"] == 2 and lines["n_pages"] == 9 and lines["lines"][0]["ref"] == "2.18"  # eclogue 1 has 83 lines
    by_line = client.get("/api/v1/corpora/small/search/", {"from_work": "vergil.eclogues", "from_ref": "1.5"}).json()
    assert by_line["query"].startswith("formosam resonare") and by_line["excluded_work"] == "vergil.eclogues"


def test_bad_requests_answer_with_a_sentence(small, client_for):
    client = client_for("annotator")
    r = client.get("/api/v1/corpora/nothing/search/", {"q": "arma virumque"})
    assert r.status_code == 404 and r.json()["detail"] == "There is no corpus named 'nothing'."
    r = client.get("/api/v1/corpora/small/works/vergil.nothing/")
    assert r.status_code == 404 and "has no work 'vergil.nothing'" in r.json()["detail"]
    r = client.get("/api/v1/corpora/small/search/", {"q": "arma " * 90})  # refused saying so, never cut
    assert r.status_code == 400 and r.json()["detail"].startswith("the query has 449 characters; the limit is 400")
    r = client.get("/api/v1/corpora/small/search/", {"q": " "})
    assert r.status_code == 400 and "empty" in r.json()["detail"]
    r = client.get("/api/v1/corpora/small/search/", {"q": "μῆνιν ἄειδε θεὰ"})
    assert r.status_code == 400 and "not Latin" in r.json()["detail"]
    r = client.get("/api/v1/corpora/small/search/", {"q": "arma", "k": "1000"})
    assert r.status_code == 400 and "between 1 and 100" in r.json()["detail"]
    r = client.get("/api/v1/corpora/small/search/", {"q": "arma", "work": "vergil.nothing"})
    assert r.status_code == 404


def test_an_index_of_another_analyser_configuration_answers_409_rebuild(small, client_for):
    from detection.methods import registry

    SearchCorpus.objects.filter(name="small").update(
        config=registry.configure("channels", {"rare_min": 6.0}).to_json())
    r = client_for("annotator").get("/api/v1/corpora/small/search/", {"q": "arma virumque cano"})
    assert r.status_code == 409 and "rebuild" in r.json()["detail"]


def test_exports_csv_json_trec(small, client_for):
    client = client_for("researcher")
    q = {"q": "Tityre, tu patulae recubans sub tegmine fagi", "k": 5, "include_own": "1"}
    rows = list(csv.DictReader(io.StringIO(client.get("/api/v1/corpora/small/search/",
                                                      {**q, "export": "csv"}).content.decode())))
    assert len(rows) == 5 and rows[0]["citation"] == "verg. ecl. 1.1" and "channel_sound" in rows[0]
    data = json.loads(client.get("/api/v1/corpora/small/search/", {**q, "export": "json"}).content)
    assert data["hits"][0]["explanation"]["channels"]
    trec = client.get("/api/v1/corpora/small/search/", {**q, "export": "trec"}).content.decode().splitlines()
    assert len(trec) == 5 and trec[0].split()[:4] == ["q1", "Q0", "vergil.eclogues:1.1", "1"]


def test_a_second_build_while_one_runs_is_refused(small, make_user, client_for):
    lead = make_user("corpus-lead", "lead")
    Job.objects.create(kind=corpora.BUILD_KIND, params={"corpus": "small", "source": "tesserae-la"},
                       status=Job.Status.RUNNING, owner=lead)
    r = client_for("lead").post("/api/v1/corpora/small/build/", {"source": "tesserae-la"}, format="json")
    assert r.status_code == 409 and "being built already" in r.json()["detail"]
    with corpora._build_lock("small"):  # a command's build holding the corpus
        with pytest.raises(corpora.CorpusError, match="being built already"):
            corpora.corpus_build(name="small", path=corpora.SOURCES["tesserae-la"])
    assert client_for("annotator").post("/api/v1/corpora/small/build/", {"source": "tesserae-la"},
                                        format="json").status_code == 403


def test_the_build_job_reports_progress_and_extends(db, settings, tmp_path, small_corpus_dir, make_user,
                                                    monkeypatch):
    """The job (run by the one runner) over a shipped source's name: here the small corpus's archive stands in for
    the shipped one."""
    import tarfile

    settings.VAR_DIR = tmp_path / "var"
    arc = tmp_path / "small.tar.xz"
    with tarfile.open(arc, "w:xz") as tf:
        for f in sorted(small_corpus_dir.iterdir()):
            if f.name != "horace.ars_poetica.tess":
                tf.add(f, arcname=f.name)
    monkeypatch.setitem(corpora.SOURCES, "tesserae-la", arc)
    from jobs.runner import run_job

    job = corpora.corpus_build_queue(user=make_user("lead-b", "lead"), name="jobbed", source="tesserae-la")
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.progress == 1.0 and "bad.carmen.tess, line 2" in job.log
    assert job.result["works"] == 3 and SearchCorpus.objects.get(name="jobbed").status == "ready"
    out = io.StringIO()
    call_command("build_corpus_index", "--corpus", "jobbed", "--from", str(small_corpus_dir), "--work",
                 "horace.ars_poetica", "--extend", stdout=out, stderr=io.StringIO())
    assert "4 works" in out.getvalue() and "(476 added)" in out.getvalue()
    out = io.StringIO()
    call_command("search_corpus", "--corpus", "jobbed", "--query", "scribendi recte sapere est et principium et fons",
                 "--top-k", "3", stdout=out)
    assert "hor. a.p." not in out.getvalue()  # the typed line is Horace's own: the added work is searched
    assert out.getvalue().splitlines()[-1].endswith("own work horace.ars_poetica left out")
    with pytest.raises(CommandError, match="no corpus named"):
        call_command("search_corpus", "--corpus", "nope", "--query", "arma")


def test_pages_for_readers_and_builders(small, client, users):
    client.force_login(users["annotator"])
    html = client.get("/corpora/").content.decode()
    assert 'data-corpus="small"' in html and 'id="build"' not in html  # reading for all, building for some
    assert client.post("/corpora/", {"name": "x", "source": "tesserae-la", "subset": "all"}).status_code == 403
    assert "vergil" in client.get("/corpora/small/").content.decode()
    page = client.get("/corpora/small/works/vergil.eclogues/", {"ref": "2.18"})
    assert page.status_code == 200 and 'id="line-2.18" class="marked"' in page.content.decode()
    assert "cited as <code>verg. ecl.</code> · page 2 of 9" in page.content.decode()
    assert "<summary>2 lines skipped: 1 not of the form &lt;ref&gt; text, 1 with an empty text</summary>" in html
    missing = client.get("/corpora/small/works/vergil.eclogues/", {"ref": "99.1"})
    assert missing.status_code == 404 and "has no line" in missing.content.decode()
    assert client.get("/corpora/small/works/nothing.here/").status_code == 404
    client.force_login(users["researcher"])
    assert 'id="build"' in client.get("/corpora/").content.decode()
    Job.objects.create(kind=corpora.BUILD_KIND, params={"corpus": "small", "source": "tesserae-la"},
                       status=Job.Status.RUNNING, owner=users["researcher"])
    refused = client.post("/corpora/", {"name": "small", "source": "tesserae-la", "subset": "all"})
    assert refused.status_code == 200 and "being built already" in refused.content.decode()


def test_the_build_card_states_the_segments_an_index_of_the_subset_holds(db, settings, tmp_path, small_corpus_dir,
                                                                         client, users, monkeypatch):
    """No figure written into the page: the count is the one a whole-subset index of the shipped source holds (its
    manifest's), here the small corpus standing in for the shipped archive."""
    settings.VAR_DIR = tmp_path / "var"
    client.force_login(users["researcher"])
    assert "segments in the index of" not in client.get("/corpora/").content.decode()
    monkeypatch.setitem(corpora.SOURCES, "tesserae-la", small_corpus_dir)
    built = corpora.corpus_build(name="whole", path=small_corpus_dir, subset="all")
    corpora.corpus_build(name="some", path=small_corpus_dir, works=["vergil.eclogues"])  # not a whole subset
    html = client.get("/corpora/").content.decode()
    assert f"(subset <code>all</code>: {built['segments']:,} segments in the index of whole)" in html
    assert SearchCorpus.objects.get(name="whole").n_segments == built["segments"]
    assert "in the index of some" not in html and "488,000" not in html
