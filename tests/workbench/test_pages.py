"""Workbench pages: who may open them, the launch form (uploads, stored texts, refusals), run and compare pages."""
import io
import re

import pytest

from workbench.models import DetectionRun, Document

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db


def _file(name, data):
    f = io.BytesIO(data)
    f.name = name
    return f


@pytest.mark.parametrize("role, expected", [("researcher", 200), ("lead", 403), ("annotator", 403), ("norole", 403)])
def test_pages_follow_roles(client, users, finished_detection, role, expected):
    client.force_login(users[role])
    for url in ["/workbench/", f"/workbench/runs/{finished_detection.pk}/", "/workbench/compare/",
                f"/workbench/runs/{finished_detection.pk}/export/"]:
        assert client.get(url).status_code == expected, url


def test_annotators_cannot_launch(client, users):
    client.force_login(users["annotator"])
    response = client.post("/workbench/", {"retriever": "bm25-lemma", "top_k": 5, "threshold_cit": 0.5,
                                           "threshold_cf": 0.5,
                                           "query_file": _file("q.csv", b"seg_id,text\na,Arma uirumque cano\n"),
                                           "source_file": _file("s.csv", b"seg_id,text\nb,Arma uirumque cano\n")})
    assert response.status_code == 403 and not Document.objects.exists() and not DetectionRun.objects.exists()


def test_launch_form_uploads_and_refuses_with_the_line(client, users):
    client.force_login(users["researcher"])
    html = client.get("/workbench/").content.decode()
    assert 'value="channels" selected' in html and 'value="lexical-rule"' in html and "method-specs" in html
    bad = client.post("/workbench/", {
        "retriever": "bm25-lemma", "top_k": 5, "threshold_cit": 0.5, "threshold_cf": 0.5,
        "query_file": _file("q.csv", b"seg_id,text\na,Arma uirumque cano\nb,urbs \x07antiqua\n"),
        "source_file": _file("s.csv", (EXAMPLES / "vergil_samples.csv").read_bytes())})
    assert bad.status_code == 200 and "q.csv, line 3, column 8: the control character U+0007 BEL" in bad.content.decode()
    assert not Document.objects.exists()  # nothing half-stored
    neither = client.post("/workbench/", {"retriever": "bm25-lemma", "top_k": 5, "threshold_cit": 0.5,
                                          "threshold_cf": 0.5})
    assert "upload a query text or pick a stored one" in neither.content.decode()
    ok = client.post("/workbench/", {
        "retriever": "bm25-lemma", "retriever_params": '{"k1": 1.2}', "top_k": 3, "threshold_cit": 0.5,
        "threshold_cf": 0.5, "name": "Jerome and Virgil",
        "query_file": _file("hieronymus_samples.csv", (EXAMPLES / "hieronymus_samples.csv").read_bytes()),
        "source_file": _file("vergil_samples.csv", (EXAMPLES / "vergil_samples.csv").read_bytes())})
    run = DetectionRun.objects.get()
    assert ok.status_code == 302 and ok["Location"] == f"/workbench/runs/{run.pk}/"
    assert run.name == "Jerome and Virgil" and run.retriever_config_params["k1"] == 1.2 and run.query_document.n_segments == 11
    stored = client.get("/workbench/").content.decode()
    assert f'value="doc:{run.query_document_id}"' in stored


def test_rows_the_upload_skips_are_said_on_the_launch(client, users):
    client.force_login(users["researcher"])
    ok = client.post("/workbench/", {
        "retriever": "bm25-lemma", "top_k": 3, "threshold_cit": 0.5, "threshold_cf": 0.5,
        "query_file": _file("q.csv", b"seg_id,text\na,Arma uirumque cano\nb,\na,Troiae qui primus\n"),
        "source_file": _file("s.csv", (EXAMPLES / "vergil_samples.csv").read_bytes())}, follow=True)
    page = ok.content.decode()
    assert "q.csv: 2 rows skipped: 1 repeating an earlier id, 1 with an empty text (q.csv, line 3: empty text of &#x27;b&#x27;; q.csv, line 4: " \
           "duplicate seg_id &#x27;a&#x27; (first on line 2))." in page
    assert DetectionRun.objects.get().query_document.n_segments == 1


def test_run_page_shows_candidates_filters_and_progress(client, users, finished_detection):
    client.force_login(users["researcher"])
    run = finished_detection
    html = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    n_labelled = run.candidates.exclude(label="").count()
    assert f'<span id="remaining">{n_labelled}</span> passages remaining' in html
    assert "hier. adv. iovin. 1.1" in html and "verg. aen. 10.636" in html and 'id="filters"' in html
    only_cit = client.get(f"/workbench/runs/{run.pk}/?label=cit.").content.decode()
    assert only_cit.count('class="cand"') == run.candidates.filter(label="cit.").count()
    assert "Filter ignored" in client.get(f"/workbench/runs/{run.pk}/?min_score=abc", follow=True).content.decode()
    export = client.get(f"/workbench/runs/{run.pk}/export/?what=results&as=csv")
    assert export.status_code == 200 and export["Content-Disposition"].endswith('-results.csv"')


def _two_runs(version, owner, ks):
    """BM25-lemma and TF-IDF-surface evaluated on the version, run in-process."""
    from benchmarks.models import EvaluationRun
    from benchmarks.services import evaluation_run_create
    from jobs.runner import run_job

    runs = []
    for method in ("bm25-lemma", "tfidf-surface"):
        run = evaluation_run_create(version=version, method=method, ks=ks, owner=owner, enqueue=False)
        assert run_job(run.job_id) == "succeeded"
        runs.append(EvaluationRun.objects.get(pk=run.pk))
    return runs


def test_compare_page(client, users, loci_version):
    a, b = _two_runs(loci_version, users["researcher"], [1, 10, 100])
    client.force_login(users["researcher"])
    html = client.get(f"/workbench/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "recall@10" in html and "B − A" in html and html.count("<svg") == 2
    only_a, only_b = html.count('id="only-a"'), html.count('id="only-b"')
    assert only_a == only_b == 1 and "Careful" not in html
    from workbench.engine.compare import gold_differences

    diff = gold_differences(a.report["per_pair"], b.report["per_pair"], 10)
    assert f"{len(diff['only_a'])} only by A, {len(diff['only_b'])} only by B" in html
    import html as H

    from benchmarks.models import Segment

    assert diff["only_a"] or diff["only_b"]
    for r in (diff["only_a"] + diff["only_b"])[:5]:  # each pair with both texts, as the corpora hold them
        q = Segment.objects.get(corpus_id=loci_version.query_corpus_id, seg_id=r["query_id"]).text
        assert H.escape(q[:150]) in html or H.escape(q[:150], quote=False) in html
    b.summary = {**b.summary, "pool": "corpus"}
    b.save()
    assert "rank against different pools" in client.get(f"/workbench/compare/?a={a.pk}&b={b.pk}").content.decode()


def _detect(query, source, owner, retriever, top_k, **kw):
    from jobs.runner import run_job
    from workbench.services import detection_run_create

    run = detection_run_create(query_document=query, source_document=source, retriever=retriever, top_k=top_k,
                               owner=owner, **kw)
    assert run_job(run.job_id) == "succeeded"
    return DetectionRun.objects.get(pk=run.pk)


def test_compare_two_detections_and_refuse_what_is_not_one(client, users, finished_detection):
    from workbench import selectors
    from workbench.engine.compare import list_differences
    from workbench.services import document_upload

    a = finished_detection
    b = _detect(a.query_document, a.source_document, users["researcher"], "tfidf-surface", 3)
    client.force_login(users["researcher"])
    picker = client.get(f"/workbench/runs/{a.pk}/").content.decode()
    assert f'href="/workbench/compare/detections/?a={a.pk}"' in picker
    html = client.get(f"/workbench/compare/detections/?a={a.pk}&b={b.pk}").content.decode()
    diff = list_differences(selectors.detection_lists(a), selectors.detection_lists(b))
    assert diff["n_a"] == a.candidates.count() and diff["n_b"] == b.candidates.count()
    assert (f"A proposes {diff['n_a']} pairs, B {diff['n_b']}: {diff['both']} by both" in html
            and f"{diff['n_only_a']} only by A, {diff['n_only_b']} only by B." in html)
    assert diff["n_only_a"] + diff["n_only_b"] > 0 and "Careful" not in html
    assert html.count('id="only-a"') == html.count('id="only-b"') == 1
    # a detection on other texts: compared on the segment ids they share, with a warning
    other = document_upload(name="q2.csv", data=b"seg_id,text\nx,arma uirumque cano\n", owner=users["researcher"])
    c = _detect(other, a.source_document, users["researcher"], "bm25-lemma", 3)
    assert "ran on different texts" in client.get(f"/workbench/compare/detections/?a={a.pk}&b={c.pk}").content.decode()
    bad = client.get(f"/workbench/compare/detections/?a={a.pk}&b=²")
    assert bad.status_code == 400 and "Pick two runs" in bad.content.decode()
    assert client.get(f"/workbench/compare/detections/?a={a.pk}&b=999999").status_code == 404


def test_compare_a_detection_with_an_evaluation_run_on_the_same_texts(client, users, loci_version):
    from workbench.services import document_from_corpus

    owner = users["researcher"]
    detection = _detect(document_from_corpus(corpus=loci_version.query_corpus),
                        document_from_corpus(corpus=loci_version.source_corpus), owner, "bm25-lemma", 10)
    run = _two_runs(loci_version, owner, [1, 10])[0]  # bm25-lemma too, ranked against the version's gold pool
    client.force_login(owner)
    page = client.get(f"/workbench/compare/detections/?a={detection.pk}").content.decode()
    assert f'value="run-{run.pk}"' in page  # offered: a benchmark over the detection's two texts
    html = client.get(f"/workbench/compare/detections/?a={detection.pk}&b=run-{run.pk}").content.decode()
    assert "Careful" not in html and f"evaluation run {run.pk}</a>" in html
    found = re.search(r"Gold references among them: A (\d+), B (\d+) of (\d+)\.", html)
    assert found and int(found.group(3)) == len(run.report["per_pair"]) and int(found.group(1)) > 0
    assert int(found.group(2)) > 0


def test_run_page_folds_the_parameters_changed_from_the_defaults(client, users, finished_detection):
    a = finished_detection
    b = _detect(a.query_document, a.source_document, users["researcher"], "bm25-lemma", 3,
                retriever_params={"k1": 1.2})
    client.force_login(users["researcher"])
    plain = client.get(f"/workbench/runs/{a.pk}/").content.decode()
    setup = plain[plain.index('id="run-setup"'):plain.index("</div>", plain.index('id="run-setup"'))]
    assert "bm25-lemma\n  (default parameters)" in setup and "lexical-rule" in setup and "{" not in setup
    changed = client.get(f"/workbench/runs/{b.pk}/").content.decode()
    assert ('<summary>1 parameter changed from the defaults</summary>\n    <ul><li><code>k1</code> = <code>1.2</code>'
            '</li></ul></details>') in changed


def test_demo_loader_is_idempotent(make_user, settings):
    from workbench.demo import load_demo_workbench

    settings.SIMILIA_DEMO_RUNS = True
    make_user("lead", "lead", "researcher")  # core.demo.DEMO_OWNER: the README's first login owns the demo's work
    assert load_demo_workbench().startswith("2 example texts, detection ")
    assert load_demo_workbench() == "2 example texts present"
    assert Document.objects.count() == 2 and DetectionRun.objects.count() == 1
    assert DetectionRun.objects.get().reranker == "lexical-rule"
    assert DetectionRun.objects.get().owner.username == "lead"


def test_compare_drills_down_to_one_querys_two_lists_page_and_api(client, users, loci_version):
    from urllib.parse import quote

    a, b = _two_runs(loci_version, users["researcher"], [1, 10])
    client.force_login(users["researcher"])
    html = client.get(f"/workbench/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "/workbench/compare/query/?a=" in html
    # a query where the two runs' reciprocal ranks differ
    rr_b = {r["query_id"]: r["rr"] for r in b.per_query}
    q = next(r["query_id"] for r in a.per_query if r["rr"] != rr_b.get(r["query_id"]))
    page = client.get(f"/workbench/compare/query/?a={a.pk}&b={b.pk}&q={quote(q)}").content.decode()
    top_a = [s for s, _ in next(r for r in a.per_query if r["query_id"] == q)["top"]]
    assert 'id="list-a"' in page and 'id="list-b"' in page and top_a[0] in page and "gold " in page
    data = client.get("/api/v1/workbench/compare/", {"a": a.pk, "b": b.pk, "query": q}).json()
    assert [r["source_id"] for r in data["a"]["list"]] == top_a
    gold = {p["source_id"] for p in a.report["per_pair"] if p["query_id"] == q}
    assert {r["source_id"] for r in data["a"]["list"] if r["gold"]} == gold & set(top_a)
    assert set(data["only_a"]) == (gold & set(top_a)) - {r["source_id"] for r in data["b"]["list"]}
    assert client.get("/api/v1/workbench/compare/", {"a": a.pk, "b": b.pk, "query": "nope"}).status_code == 404
    bad = client.get("/api/v1/workbench/compare/", {"a": "x", "b": b.pk, "query": q})
    assert bad.status_code == 400 and "a" in bad.json()
    assert client.get("/api/v1/workbench/compare/", {"a": "²", "b": b.pk, "query": q}).status_code == 400
    assert client.get(f"/workbench/compare/query/?a={a.pk}&b=999999&q={quote(q)}").status_code == 404
