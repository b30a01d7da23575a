"""Workbench API: upload → detect → candidates → verdicts → export, permissions, validation, OpenAPI."""
import csv
import io
import json

import pytest

from tests.conftest import api_key
from workbench.models import Candidate, DetectionRun, Document, Verdict

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db


def _upload(client, name, data, **extra):
    f = io.BytesIO(data)
    f.name = name
    return client.post("/api/v1/workbench/documents/", {"file": f, **extra}, format="multipart")


def test_a_script_posts_two_texts_and_fetches_ranked_parallels(client_for):
    from jobs.runner import run_job

    client = client_for("researcher")
    q = _upload(client, "hieronymus_samples.csv", (EXAMPLES / "hieronymus_samples.csv").read_bytes())
    s = _upload(client, "vergil_samples.csv", (EXAMPLES / "vergil_samples.csv").read_bytes())
    assert q.status_code == 201 and s.status_code == 201 and q.json()["n_segments"] == 11
    methods = client.get("/api/v1/workbench/methods/").json()
    assert "bm25-lemma" in {m["name"] for m in methods["retrievers"]}
    assert "lexical-rule" in {m["name"] for m in methods["rerankers"]}
    created = client.post("/api/v1/workbench/runs/", {
        "query_document": q.json()["id"], "source_document": s.json()["id"], "retriever": "bm25-lemma",
        "retriever_params": {"k1": 1.2}, "top_k": 5}, format="json")
    assert created.status_code == 201, created.content
    run = DetectionRun.objects.get(pk=created.json()["id"])
    assert run.job.queue == "interactive" and run.retriever_config_params == {"k1": 1.2, "b": 0.75, "stopwords": True}
    assert run_job(run.job_id) == "succeeded"
    detail = client.get(f"/api/v1/workbench/runs/{run.pk}/").json()
    assert detail["status"] == "succeeded" and detail["summary"]["n_queries"] == 11
    page = client.get(f"/api/v1/workbench/runs/{run.pk}/candidates/?page_size=5").json()
    assert page["count"] == detail["summary"]["n_candidates"] and len(page["results"]) == 5
    first = page["results"][0]
    assert first["query_id"] == "hier. adv. iovin. 1.1" and first["rank"] == 1 and first["source_id"] == "verg. aen. 10.636"
    assert first["p_cit"] is None and first["score"] > 0


def test_upload_and_run_refusals_name_the_problem(client_for, finished_detection, monkeypatch):
    client = client_for("researcher")
    bad = _upload(client, "q.csv", b"seg_id,text\na,Arma uirumque cano\nb,\x1bTroiae qui primus\n")
    assert bad.status_code == 400 and "q.csv, line 3, column 3: the control character U+001B ESC" in bad.json()["detail"]
    twice = _upload(client, "q.csv", b"seg_id,text\na,Arma uirumque cano\na,Troiae qui primus\n")  # as detect does
    assert twice.status_code == 201 and twice.json()["n_segments"] == 1
    assert twice.json()["provenance"]["skipped_rows"] == ["q.csv, line 3: duplicate seg_id 'a' (first on line 2)"]
    assert _upload(client, "q.bin", b"x").status_code == 400
    assert client.post("/api/v1/workbench/documents/", {}, format="json").status_code == 400
    run = finished_detection
    base = {"query_document": run.query_document_id, "source_document": run.source_document_id}
    for body, needle in [({"retriever": "nope"}, "unknown method"),
                         ({"retriever": "bm25-lemma", "retriever_params": {"k1": 99}}, "must be ≤ 10"),
                         ({"retriever": "bm25-lemma", "retriever_params": {"cache_dir": "/tmp"}}, "unknown parameter"),
                         ({"retriever": "levenshtein"}, "is a pair_scorer, not a retriever"),
                         ({"retriever": "bm25-lemma", "reranker": "bm25-lemma"}, "not a reranker"),
                         ({"retriever": "bm25-lemma", "thresholds": {"cit.": 2}}, "between 0 and 1"),
                         ({"retriever": "bm25-lemma", "top_k": 0}, "top_k")]:
        response = client.post("/api/v1/workbench/runs/", {**base, **body}, format="json")
        assert response.status_code == 400 and needle in json.dumps(response.json(), ensure_ascii=False), body
    assert DetectionRun.objects.count() == 1
    monkeypatch.setattr("workbench.services.MAX_CANDIDATES", 20)
    too_many = client.post("/api/v1/workbench/runs/", {**base, "retriever": "bm25-lemma", "top_k": 2}, format="json")
    assert too_many.status_code == 400 and "11 query segments × top 2 would be 22 candidates" in too_many.json()["detail"]


def test_a_run_without_a_retriever_gets_the_default_with_the_units_profile(client_for, finished_detection):
    """No ``retriever``: ``channels``, profile verse for lines, prose for sentences; a profile given is kept."""
    client = client_for("researcher")
    base = {"query_document": finished_detection.query_document_id,
            "source_document": finished_detection.source_document_id, "top_k": 2}
    made = {}
    for unit, params in (("line", None), ("sentence", None), ("sentence", {"profile": "verse"})):
        body = {**base, "unit": unit, **({"retriever_params": params} if params else {})}
        response = client.post("/api/v1/workbench/runs/", body, format="json")
        assert response.status_code == 201, response.content
        run = DetectionRun.objects.get(pk=response.json()["id"])
        made[(unit, bool(params))] = (run.retriever, run.retriever_config_params["profile"])
    assert made == {("line", False): ("channels", "verse"), ("sentence", False): ("channels", "prose"),
                    ("sentence", True): ("channels", "verse")}


@pytest.mark.parametrize("role, expected", [("annotator", 403), ("lead", 403), ("norole", 403), (None, 403)])
def test_only_researchers_use_the_workbench(client_for, finished_detection, role, expected):
    client = client_for(role)
    run = finished_detection
    cand = run.candidates.first()
    for url in ["/api/v1/workbench/methods/", "/api/v1/workbench/documents/", "/api/v1/workbench/runs/",
                f"/api/v1/workbench/runs/{run.pk}/candidates/", f"/api/v1/workbench/candidates/{cand.pk}/"]:
        assert client.get(url).status_code == expected, url
    assert client.post("/api/v1/workbench/runs/", {"query_document": run.query_document_id,
                                                   "source_document": run.source_document_id,
                                                   "retriever": "bm25-lemma"}, format="json").status_code == expected
    assert client.post(f"/api/v1/workbench/candidates/{cand.pk}/verdict/", {"decision": "cit."},
                       format="json").status_code == expected
    assert not Verdict.objects.exists() and DetectionRun.objects.count() == 1


def test_researchers_see_only_their_own_runs_and_uploads(make_user, client_for, finished_detection):
    from rest_framework.test import APIClient

    other = make_user("res2", "researcher")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(other)}")
    run = finished_detection
    assert client.get("/api/v1/workbench/runs/").json()["results"] == []
    assert client.get(f"/api/v1/workbench/runs/{run.pk}/candidates/").status_code == 404
    assert client.get(f"/api/v1/workbench/candidates/{run.candidates.first().pk}/").status_code == 404
    assert client.get("/api/v1/workbench/documents/").json()["results"] == []
    stolen = client.post("/api/v1/workbench/runs/", {"query_document": run.query_document_id,
                                                     "source_document": run.source_document_id,
                                                     "retriever": "bm25-lemma"}, format="json")
    assert stolen.status_code == 400 and "is not yours" in json.dumps(stolen.json())


def test_filters_detail_verdicts_and_exports(client_for, finished_detection, users):
    client = client_for("researcher")
    run = finished_detection
    url = f"/api/v1/workbench/runs/{run.pk}/candidates/"
    everything = client.get(url).json()
    assert everything["count"] == run.candidates.count() > 11
    cit = client.get(url + "?label=cit.").json()
    assert cit["count"] == run.candidates.filter(label="cit.").count() > 0
    assert all(r["label"] == "cit." for r in cit["results"])
    assert all(r["bucket"] == "bigram" for r in client.get(url + "?bucket=bigram").json()["results"])
    found = client.get(url + "?q=10.636").json()["results"]
    assert found and all("10.636" in r["source_id"] or "10.636" in r["query_id"] for r in found)
    assert client.get(url + "?q=decus").json()["count"] >= 1  # text search
    assert client.get(url + "?min_score=x").status_code == 400 and client.get(url + "?label=foo").status_code == 400
    high = client.get(url + "?min_score=5").json()["results"]
    assert all(r["score"] >= 5 for r in high)

    top = everything["results"][0]
    detail = client.get(f"/api/v1/workbench/candidates/{top['id']}/").json()
    assert "mens" in detail["highlight"]["shared_lemmas"]
    assert any(shared and piece == "mente" for piece, shared, _ in detail["highlight"]["source"])
    assert detail["explain"] == {} and detail["explanation"] is None  # bm25-lemma explains nothing (yet)
    second = everything["results"][1]
    ok = client.post(f"/api/v1/workbench/candidates/{top['id']}/verdict/", {"decision": "cit.", "note": "Aen. 10.636"},
                     format="json")
    assert ok.status_code == 200 and ok.json()["user"] == "res" and ok.json()["progress"]["decided"] == 1
    client.post(f"/api/v1/workbench/candidates/{second['id']}/verdict/", {"decision": "rejected"}, format="json")
    again = client.post(f"/api/v1/workbench/candidates/{top['id']}/verdict/", {"decision": "cf."}, format="json")
    assert again.status_code == 200 and Verdict.objects.count() == 2
    assert Verdict.objects.get(candidate_id=top["id"]).decision == "cf."
    assert client.post(f"/api/v1/workbench/candidates/{top['id']}/verdict/", {"decision": "maybe"},
                       format="json").status_code == 400
    assert client.get(url + "?verdict=unverified").json()["count"] == everything["count"] - 2
    assert client.get(url + "?verdict=rejected").json()["results"][0]["id"] == second["id"]

    export = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=csv")
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    package_header = (EXAMPLES / "results.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert list(rows[0])[:7] == package_header == ["query_id", "query_text", "source_id", "source_text",
                                                   "similarity", "probability", "above_threshold"]
    assert len(rows) == everything["count"] and {r["above_threshold"] for r in rows} <= {"Yes", "No"}
    as_json = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=json&label=cit.").json()
    assert len(as_json["results"]) == cit["count"]
    verdicts = list(csv.DictReader(io.StringIO(client.get(
        f"/api/v1/workbench/runs/{run.pk}/export/?what=verdicts").content.decode())))
    assert [(v["query_id"], v["label"], v["decision"], v["user"]) for v in verdicts] == [
        (top["query_id"], "1", "cf.", "res"), (second["query_id"], "0", "rejected", "res")]
    assert verdicts[0]["decided_at"]
    truth_header = (EXAMPLES / "ground_truth.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert list(verdicts[0])[:3] == truth_header  # the package's ground_truth.csv columns come first


EXPLAINED = [  # what the engine gives per candidate (three candidates of query 0 and one of query 1)
    {"channels": [{"name": "lemma", "score": 2.0, "weight": 0.6, "contribution": 1.2, "matches": [["mens", "mens"]]},
                  {"name": "exact", "score": 1.0, "weight": 0.3, "contribution": 0.3, "matches": [["sonum", "sonum"]]},
                  {"name": "semantic", "score": 0.1, "weight": 0.1, "contribution": 0.0, "matches": []}],
     "uniqueness": 2, "rarity": {"mens": 3.5, "sonum": 7.25}, "query_lines": ["1"], "source_lines": ["10.636"]},
    {"channels": [{"name": "sound", "score": 0.4, "weight": 1.0, "contribution": 0.4, "matches": [["sine", "sine"]]}],
     "uniqueness": None, "rarity": {}, "query_lines": [], "source_lines": []},
    {},  # a candidate without an explanation
    '{"channels": [{"name": "lemma", "score": 1, "weight": 1, "contribution": 1.5, "matches": []}], "uniqueness": 0}',
]


def _store(run, rows):
    """Store candidates ``(query, source, rank, score)`` with EXPLAINED through the job's result store."""
    import numpy as np

    from detection.candidates import Candidates
    from workbench.services import detection_run_store

    q, s, r, sc = (np.asarray(col) for col in zip(*rows))
    cands = Candidates(q, s, r, sc.astype(float), None, [""] * len(rows), np.zeros(len(rows), np.int16),
                       ["none"] * len(rows))
    cands.explain = EXPLAINED[:len(rows)]  # the column the engine adds to its candidates
    return detection_run_store(run=run, candidates=cands, merged={"shards": 1, "shards_per_worker": {"w": 1}},
                               progress=lambda f, m="": None, log=lambda m: None)


def test_explanations_are_stored_and_shown_in_the_api_and_exports(client_for, finished_detection):
    client = client_for("researcher")
    run = finished_detection
    _store(run, [(0, 0, 1, 3.0), (0, 1, 2, 1.0), (0, 2, 3, 1.0), (1, 3, 1, 2.0)])
    url = f"/api/v1/workbench/runs/{run.pk}/candidates/"
    rows = client.get(url).json()["results"]
    q0, q1 = run.query_document.segments.order_by("position").values_list("seg_id", flat=True)[:2]
    assert [(r["query_id"], r["rank"]) for r in rows] == [(q0, 1), (q0, 2), (q0, 3), (q1, 1)]
    assert rows[0]["explain"] == EXPLAINED[0] and rows[2]["explain"] == {} and rows[3]["explain"]["uniqueness"] == 0
    detail = client.get(f"/api/v1/workbench/candidates/{rows[0]['id']}/").json()
    ex = detail["explanation"]
    assert [(c["name"], c["contribution"], round(c["share"], 3)) for c in ex["channels"]] == [
        ("lemma", 1.2, 0.8), ("exact", 0.3, 0.2), ("semantic", 0.0, 0.0)]
    assert ex["uniqueness"] == 2 and ex["rarity"] == [["sonum", 7.25, "common"], ["mens", 3.5, "common"]]
    assert ex["uniqueness_text"] == "shared by 2 other passages: a rare combination"
    coloured = {piece: chans for piece, _, chans in detail["highlight"]["query"] if chans}
    assert coloured == {"mente": ["lemma"], "sonum": ["exact"]}
    assert client.get(f"/api/v1/workbench/candidates/{rows[2]['id']}/").json()["explanation"] is None

    export = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=csv&order=score").content.decode()
    got = [(r["rank"], r["similarity"], r["channels"], r["contributions"], r["uniqueness"], r["matched_words"])
           for r in csv.DictReader(io.StringIO(export))]
    assert got == [("1", "3.000000", "lemma;exact", "lemma=1.2000;exact=0.3000", "2", "lemma:mens/mens exact:sonum/sonum"),
                   ("1", "2.000000", "lemma", "lemma=1.5000", "0", ""),
                   ("2", "1.000000", "sound", "sound=0.4000", "", "sound:sine/sine"),
                   ("3", "1.000000", "", "", "", "")]
    as_json = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=json").json()["results"]
    assert [r["explain"] for r in as_json][:3] == EXPLAINED[:3]


def test_the_whole_run_sorts_by_score_with_a_stable_tie_break(client_for, finished_detection):
    """order=score: best first across queries; equal scores in query order, then rank; the same list whatever
    the page size (the tie-break makes every page a slice of one order)."""
    client = client_for("researcher")
    run = finished_detection
    url = f"/api/v1/workbench/runs/{run.pk}/candidates/"
    whole = client.get(url + "?order=score&page_size=500").json()
    assert whole["count"] == run.candidates.count()
    expected = sorted(run.candidates.all(), key=lambda c: (-c.score, c.query_position, c.rank, c.pk))
    assert [r["id"] for r in whole["results"]] == [c.pk for c in expected]
    assert len({c.query_position for c in expected[:10]}) > 1  # not one query's list: the run's
    pages = -(-whole["count"] // 9)
    paged = [r["id"] for p in range(1, pages + 1)
             for r in client.get(url + f"?order=score&page_size=9&page={p}").json()["results"]]
    assert paged == [c.pk for c in expected]
    assert client.get(url + "?order=best").status_code == 400
    # ties: equal scores come in query order, then rank
    _store(run, [(1, 0, 1, 1.0), (0, 1, 2, 1.0), (0, 2, 1, 1.0), (1, 3, 2, 5.0)])
    q0, q1 = run.query_document.segments.order_by("position").values_list("seg_id", flat=True)[:2]
    tied = client.get(url + "?order=score").json()["results"]
    assert [(r["query_id"], r["rank"], r["score"]) for r in tied] == [
        (q1, 2, 5.0), (q0, 1, 1.0), (q0, 2, 1.0), (q1, 1, 1.0)]


def test_openapi_documents_the_workbench(client_for):
    schema = client_for("researcher").get("/api/schema/?format=json").json()
    for path in ["/api/v1/workbench/documents/", "/api/v1/workbench/runs/", "/api/v1/workbench/runs/{id}/candidates/",
                 "/api/v1/workbench/candidates/{id}/verdict/", "/api/v1/workbench/runs/{id}/export/",
                 "/api/v1/workbench/runs/{id}/promote/", "/api/v1/workbench/methods/"]:
        assert path in schema["paths"], path
    params = {p["name"] for p in schema["paths"]["/api/v1/workbench/runs/{id}/candidates/"]["get"]["parameters"]}
    assert {"label", "min_score", "author_pair", "bucket", "q", "verdict", "page", "order"} <= params


def test_stored_corpus_copy_is_made_once(client_for, loci_version):
    client = client_for("researcher")
    corpora = client.get("/api/v1/workbench/corpora/").json()["results"]
    query_corpus = next(c for c in corpora if c["id"] == loci_version.query_corpus_id)
    assert query_corpus["n_segments"] == 463
    first = client.post("/api/v1/workbench/documents/", {"corpus": loci_version.query_corpus_id}, format="json")
    second = client.post("/api/v1/workbench/documents/", {"corpus": loci_version.query_corpus_id}, format="json")
    assert first.status_code == second.status_code == 201 and first.json()["id"] == second.json()["id"]
    assert Document.objects.get(pk=first.json()["id"]).segments.count() == 463


def test_promoting_confirmed_parallels_makes_a_new_gold_version(users, loci_version):
    from benchmarks.models import BenchmarkVersion, GoldReference
    from jobs.runner import run_job
    from workbench.services import (
        WorkbenchError,
        detection_run_create,
        document_from_corpus,
        gold_promote,
        verdict_set,
    )

    owner = users["researcher"]
    run = detection_run_create(query_document=document_from_corpus(corpus=loci_version.query_corpus),
                               source_document=document_from_corpus(corpus=loci_version.source_corpus),
                               retriever="bm25-lemma", top_k=2, owner=owner)
    assert run_job(run.job_id) == "succeeded"
    gold = set(GoldReference.objects.filter(version=loci_version).values_list("query__seg_id", "source__seg_id"))
    cands = list(Candidate.objects.filter(run=run).select_related("query", "source"))
    new_pair = next(c for c in cands if (c.query.seg_id, c.source.seg_id) not in gold)
    old_pair = next(c for c in cands if (c.query.seg_id, c.source.seg_id) in gold)
    rejected = next(c for c in cands if c not in (new_pair, old_pair))
    with pytest.raises(WorkbenchError, match="label must be"):
        gold_promote(run=run, base=loci_version, version="", user=owner)
    with pytest.raises(WorkbenchError, match="no confirmed parallel"):
        gold_promote(run=run, base=loci_version, version="2", user=owner)
    verdict_set(candidate=new_pair, user=owner, decision="cf.", note="an allusion the gold missed")
    verdict_set(candidate=old_pair, user=owner, decision="cit.")
    verdict_set(candidate=rejected, user=owner, decision="rejected")
    new = gold_promote(run=run, base=loci_version, version="2", user=owner)
    assert new.gold.count() == 546 and new.provenance["promoted"]["added"] == 1
    added = new.gold.get(pair_id__startswith="wb")
    assert (added.query.seg_id, added.source.seg_id, added.ref_type) == (new_pair.query.seg_id, new_pair.source.seg_id, "cf.")
    assert "verdict by res" in added.provenance
    assert BenchmarkVersion.objects.get(pk=loci_version.pk).gold.count() == 545
    with pytest.raises(WorkbenchError, match="already has a version"):
        gold_promote(run=run, base=loci_version, version="2", user=owner)


def test_a_promoted_version_waits_for_a_leads_approval(users, make_user, client_for, loci_version):
    """A researcher's promotion does not publish a new version of the shared benchmark: the others neither list
    nor read it until a lead approves it; a researcher cannot approve it."""
    from jobs.runner import run_job
    from workbench.services import detection_run_create, document_from_corpus, verdict_set

    owner = users["researcher"]
    run = detection_run_create(query_document=document_from_corpus(corpus=loci_version.query_corpus),
                               source_document=document_from_corpus(corpus=loci_version.source_corpus),
                               retriever="bm25-lemma", top_k=1, owner=owner)
    assert run_job(run.job_id) == "succeeded"
    for candidate in Candidate.objects.filter(run=run)[:2]:
        verdict_set(candidate=candidate, user=owner, decision="cit.")
    proposer = client_for("researcher")
    response = proposer.post(f"/api/v1/workbench/runs/{run.pk}/promote/",
                             {"base_version": loci_version.pk, "version": "2-proposed"}, format="json")
    assert response.status_code == 201 and response.json()["awaiting_approval"] is True
    new_id = response.json()["id"]
    other = client_for(make_user("res2", "researcher"))
    assert new_id not in {v["id"] for v in other.get("/api/v1/benchmarks/versions/").json()["results"]}
    assert other.get(f"/api/v1/benchmarks/versions/{new_id}/").status_code == 404
    assert other.get(f"/api/v1/benchmarks/versions/{new_id}/gold/").status_code == 404
    assert proposer.get(f"/api/v1/benchmarks/versions/{new_id}/").json()["awaiting_approval"] is True
    refused = proposer.post(f"/api/v1/benchmarks/versions/{new_id}/approve/")
    assert refused.status_code == 403 and "lead" in refused.json()["detail"]
    approved = client_for("lead").post(f"/api/v1/benchmarks/versions/{new_id}/approve/")
    assert approved.status_code == 200 and approved.json()["awaiting_approval"] is False
    assert approved.json()["provenance"]["approved"]["by"] == "lea"
    assert new_id in {v["id"] for v in other.get("/api/v1/benchmarks/versions/").json()["results"]}
    # a lead's own promotion needs no approval
    from workbench.services import gold_promote

    both = make_user("both", "lead", "researcher")
    assert gold_promote(run=run, base=loci_version, version="3", user=both).awaiting_approval is False


def test_methods_registered_elsewhere_appear_and_route_by_their_declaration(client_for, finished_detection):
    """A retriever another module registers shows up in the picker and the API at once; a GPU one's job goes to
    the gpu queue; its parameters are validated by its own declaration."""
    from detection.methods import registry
    from detection.methods.registry import MethodSpec, Param

    spec = MethodSpec("toy-dense", "retriever", lambda **kw: None, "a GPU retriever registered by a test",
                      needs_gpu=True, params=(Param("alpha", "float", 0.5, "weight", min=0.0, max=1.0),))
    registry.register(spec)
    try:
        client = client_for("researcher")
        assert "toy-dense" in {m["name"] for m in client.get("/api/v1/workbench/methods/").json()["retrievers"]}
        run = finished_detection
        base = {"query_document": run.query_document_id, "source_document": run.source_document_id,
                "retriever": "toy-dense"}
        bad = client.post("/api/v1/workbench/runs/", {**base, "retriever_params": {"alpha": 3}}, format="json")
        assert bad.status_code == 400 and "'alpha'" in bad.json()["detail"]
        ok = client.post("/api/v1/workbench/runs/", {**base, "retriever_params": {"alpha": 0.25}}, format="json")
        assert ok.status_code == 201
        created = DetectionRun.objects.get(pk=ok.json()["id"])
        assert created.job.queue == "gpu" and created.retriever_config_params == {"alpha": 0.25}
    finally:
        registry.unregister("toy-dense")


def test_a_supervised_reranker_must_name_a_trained_model(client_for, finished_detection):
    from detection.methods import registry
    from detection.methods.registry import MethodSpec, Param

    registry.register(MethodSpec("toy-trained", "reranker", lambda **kw: None, "a supervised reranker", supervised=True,
                                 params=(Param("model", "model", None, "trained model", nullable=True),)))
    try:
        run = finished_detection
        response = client_for("researcher").post("/api/v1/workbench/runs/", {
            "query_document": run.query_document_id, "source_document": run.source_document_id,
            "retriever": "bm25-lemma", "reranker": "toy-trained"}, format="json")
        assert response.status_code == 400 and "name a trained model" in response.json()["detail"]
    finally:
        registry.unregister("toy-trained")


def test_a_channels_run_is_explained_end_to_end(client_for, users):
    """The `channels` retriever through the sharded detection job: every stored candidate carries the engine's
    explanation; the detail colours the quotation's words, the CSV names the channels, the JSON keeps it whole."""
    from jobs.runner import run_job

    client = client_for("researcher")
    q = _upload(client, "hieronymus_samples.csv", (EXAMPLES / "hieronymus_samples.csv").read_bytes()).json()
    s = _upload(client, "vergil_samples.csv", (EXAMPLES / "vergil_samples.csv").read_bytes()).json()
    created = client.post("/api/v1/workbench/runs/", {"query_document": q["id"], "source_document": s["id"],
                                                      "retriever": "channels", "top_k": 3}, format="json")
    assert created.status_code == 201, created.content
    run = DetectionRun.objects.get(pk=created.json()["id"])
    assert run_job(run.job_id) == "succeeded", run.job.error
    rows = client.get(f"/api/v1/workbench/runs/{run.pk}/candidates/?page_size=500").json()["results"]
    assert rows and all(r["explain"]["channels"] for r in rows)
    quoted = next(r for r in rows if (r["query_id"], r["source_id"]) == ("hier. adv. iovin. 1.1", "verg. aen. 10.636"))
    detail = client.get(f"/api/v1/workbench/candidates/{quoted['id']}/").json()
    names = [c["name"] for c in detail["explanation"]["channels"]]
    assert {"quote", "lemma", "form"} <= set(names)
    assert sum(c["share"] for c in detail["explanation"]["channels"]) == pytest.approx(1.0)
    words = {piece: set(chans) for piece, _, chans in detail["highlight"]["source"] if chans}
    assert {"quote", "lemma"} <= words["mente"] and {"quote", "lemma"} <= words["sonum"]
    assert {"sonum", "mente"} <= {w for w, *_ in detail["explanation"]["rarity"]}
    export = list(csv.DictReader(io.StringIO(client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=csv").content
                                             .decode())))
    first = next(r for r in export if r["source_id"] == "verg. aen. 10.636" and r["query_id"] == "hier. adv. iovin. 1.1")
    assert first["channels"].split(";")[0] == names[0] and "quote:dat sine mente/dat sine mente" in first["matched_words"]
    as_json = client.get(f"/api/v1/workbench/runs/{run.pk}/export/?as=json").json()["results"]
    assert all(r["explain"]["channels"] for r in as_json)
