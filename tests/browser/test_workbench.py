"""The researcher workbench in Debian's chromium: upload two texts, detect, explore by keyboard, confirm one
parallel and reject one, export and check the file and the database; launch two Loci runs on a chosen pool
and compare them; run a DBBE pilot on an uploaded verses file (issue 14)."""
import csv
from pathlib import Path

import pytest

from benchmarks.models import EvaluationRun, PilotRun
from workbench.models import DetectionRun, Verdict

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "data" / "locisimiles" / "package_examples"
SHOTS = ROOT / "var" / "screenshots"


def test_upload_detect_explore_verify_export(live_server, page, make_user, tmp_path):
    make_user("wbres", "researcher")
    login(page, live_server.url, "wbres", "pw-wbres")
    page.click("nav >> text=Workbench")
    page.set_input_files("#id_query_file", str(EXAMPLES / "hieronymus_samples.csv"))
    page.set_input_files("#id_source_file", str(EXAMPLES / "vergil_samples.csv"))
    page.select_option("#id_reranker", "lexical-rule")
    assert "lexical-rule: " in page.inner_text("#param-help")  # its declared parameters, whoever registers it
    page.fill("#id_top_k", "3")
    page.fill("#id_threshold_cit", "0.2")
    page.fill("#id_threshold_cf", "0.2")
    page.click("#detect-form button[type=submit]")
    page.wait_for_url("**/workbench/runs/*/")
    page.wait_for_selector("#explorer-card", timeout=60000)  # the job ran (eager) or the page refreshes until it has
    run = DetectionRun.objects.get()
    assert run.status == "succeeded" and run.summary["n_queries"] == 11
    remaining = int(page.inner_text("#remaining"))
    assert remaining == run.candidates.exclude(label="").count() > 2

    page.keyboard.press("j")
    page.wait_for_selector("#detail-body:not([hidden])")
    page.wait_for_selector("#d-source mark.shared")
    assert page.inner_text("#d-ids") == "hier. adv. iovin. 1.1 → verg. aen. 10.636"
    marked = page.locator("#d-source mark.shared").all_inner_texts()
    assert {"mente", "sonum"} <= set(marked)
    first_id = int(page.get_attribute("tr.cand.selected", "data-id"))
    page.fill("#d-note", "Aen. 10.636, quoted by name")
    page.click("#detail-body")  # leave the note field so the keys act on the list
    page.keyboard.press("c")
    page.wait_for_selector("#save-state:has-text('Saved: cit.')")
    page.keyboard.press("j")
    page.wait_for_function(f"document.querySelector('tr.cand.selected').dataset.id != '{first_id}'")
    page.wait_for_selector("#d-ids:not(:has-text('verg. aen. 10.636'))")
    second_id = int(page.get_attribute("tr.cand.selected", "data-id"))
    page.keyboard.press("r")
    page.wait_for_selector("#save-state:has-text('Saved: rejected')")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "workbench-explorer.png"), full_page=True)
    # the two verdicts are stored with who and when, and the page's count follows the server's
    verdicts = {v.candidate_id: v for v in Verdict.objects.select_related("user")}
    assert verdicts[first_id].decision == "cit." and verdicts[first_id].note == "Aen. 10.636, quoted by name"
    assert verdicts[second_id].decision == "rejected" and verdicts[second_id].user.username == "wbres"
    labelled = {c.pk for c in run.candidates.exclude(label="")}
    assert int(page.inner_text("#remaining")) == remaining - len({first_id, second_id} & labelled)

    with page.expect_download() as download:
        page.click("#export-verdicts")
    path = tmp_path / "verdicts.csv"
    download.value.save_as(path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [(r["query_id"], r["source_id"], r["label"], r["decision"], r["user"]) for r in rows] == [
        ("hier. adv. iovin. 1.1", "verg. aen. 10.636", "1", "cit.", "wbres"),
        (verdicts[second_id].candidate.query.seg_id, verdicts[second_id].candidate.source.seg_id, "0", "rejected",
         "wbres")]
    with page.expect_download() as download:
        page.click("#export-csv")
    path = tmp_path / "results.csv"
    download.value.save_as(path)
    results = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(results) == run.summary["n_candidates"] and results[0]["query_text"].startswith("Furiosas")

    # filters and search reload the list server-side
    page.click("#filter-box > summary")  # folded under the list's head while no filter is set
    page.fill("#search", "decus")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=decus**")
    assert page.locator("tr.cand").count() >= 1 and "O decus Italiae" in page.inner_text("#candidates")
    assert page.locator("#filter-box").get_attribute("open") is not None  # a filter is set: shown open


def test_launch_two_runs_on_a_pool_and_compare(live_server, page, make_user, settings):
    from benchmarks.services import benchmark_import_545
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    make_user("cmpres", "researcher")
    login(page, live_server.url, "cmpres", "pw-cmpres")
    for method in ("bm25-lemma", "tfidf-surface"):
        page.goto(f"{live_server.url}/benchmarks/versions/{version.pk}/")
        page.select_option("#id_method", method)
        page.select_option("#id_pool", "gold")
        page.fill("#id_ks", "1, 10, 100")
        page.click("#launch button[type=submit]")
        page.wait_for_url("**/benchmarks/runs/*/")
        page.wait_for_selector("#run-pool", timeout=60000)
        assert "Pool: gold sources only" in page.inner_text("#run-pool")
    a, b = EvaluationRun.objects.order_by("pk")
    assert a.summary["pool"] == b.summary["pool"] == "gold" and a.report and b.report
    page.wait_for_selector("#worst-queries .passage")  # hardest queries show their texts
    page.goto(f"{live_server.url}/benchmarks/versions/{version.pk}/")
    assert "gold (2 runs)" in page.inner_text("#pool-tabs")
    page.goto(f"{live_server.url}/workbench/compare/")
    page.select_option("#id_a", str(a.pk))
    page.select_option("#id_b", str(b.pk))
    page.click("#pick button[type=submit]")
    page.wait_for_selector("#gold-diff")
    text = page.inner_text("#metrics")
    assert "recall@10" in text and "B − A" in text
    assert page.locator(".chart svg").count() == 2
    page.screenshot(path=str(SHOTS / "workbench-compare.png"), full_page=True)
    # drill down from a query row to that query's two ranked lists, gold marked (issue 25)
    first = page.locator("#query-diff a.drill").first
    query = first.inner_text()
    first.click()
    page.wait_for_url("**/workbench/compare/query/**")
    assert page.inner_text("h1") == f"Query {query}"
    rows_a, rows_b = page.locator("#list-a tbody tr"), page.locator("#list-b tbody tr")
    assert rows_a.count() == rows_b.count() == 10
    gold = {p["source_id"] for p in a.report["per_pair"] if p["query_id"] == query}
    marked = {page.locator("#list-a tbody tr.gold td").nth(1 + 5 * i).inner_text()
              for i in range(page.locator("#list-a tbody tr.gold").count())}
    top_a = [s for s, _ in next(r for r in a.per_query if r["query_id"] == query)["top"]]
    assert marked == gold & set(top_a)
    assert "gold source" in page.inner_text("#gold-summary")
    page.click("text=← Comparison of runs")
    page.wait_for_selector("#gold-diff")


def test_pilot_with_an_uploaded_verses_file(live_server, page, make_user, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    settings.SHARED_DATA_DIR = tmp_path / "shared"
    settings.VAR_DIR = tmp_path / "var"
    verses = tmp_path / "my_verses.csv"
    with verses.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["type_id", "id", "idoriginal_poem", "idgroup", "verse", "order"])
        writer.writerows([("t1", "v1", "o1", "g1", "κύριε ἐλέησον τὸν δοῦλον", 1),
                          ("t1", "v2", "o2", "g1", "κύριε ἐλέησον τὸν δοῦλόν σου", 1),
                          ("t2", "v3", "o3", "g2", "ἡ βίβλος αὕτη γέγραπται", 1),
                          ("t2", "v4", "o4", "g2", "ἡ βίβλος αὕτη ἐγράφη", 1)])
    make_user("pilres", "researcher")
    login(page, live_server.url, "pilres", "pw-pilres")
    page.goto(f"{live_server.url}/benchmarks/pilots/")
    assert "no verses file is stored yet: upload one" in page.inner_text("#launch")
    page.select_option("#id_method", "levenshtein")
    page.set_input_files("#id_upload", str(verses))
    page.click("#launch button[type=submit]")
    page.wait_for_url("**/benchmarks/pilots/*/")
    page.wait_for_selector("svg", timeout=60000)
    run = PilotRun.objects.get()
    assert run.verses_name.endswith("-my_verses.csv") and run.best_f1 is not None
    assert "my_verses.csv" in page.inner_text("main") and str(tmp_path) not in page.content()


def test_confirmed_discoveries_grow_the_benchmark(live_server, page, make_user):
    """A detection over a benchmark version's own corpora (picked as stored texts), one parallel confirmed by
    keyboard, then the promote form: a new version whose gold holds the old references plus the confirmed one."""
    from benchmarks.models import BenchmarkVersion, GoldReference
    from benchmarks.services import benchmark_import_545
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    make_user("grow", "researcher")
    login(page, live_server.url, "grow", "pw-grow")
    page.goto(f"{live_server.url}/workbench/")
    page.select_option("#id_query_stored", f"corpus:{version.query_corpus_id}")
    page.select_option("#id_source_stored", f"corpus:{version.source_corpus_id}")
    page.fill("#id_top_k", "2")
    page.click("#detect-form button[type=submit]")
    page.wait_for_selector("#explorer-card", timeout=60000)
    run = DetectionRun.objects.get()
    gold = set(GoldReference.objects.filter(version=version).values_list("query__seg_id", "source__seg_id"))
    new_pair = next(c for c in run.candidates.select_related("query", "source").order_by("query_position", "rank")
                    if (c.query.seg_id, c.source.seg_id) not in gold)
    page.click(f"tr.cand[data-id='{new_pair.pk}']")
    page.wait_for_selector(f"#detail-body[data-id='{new_pair.pk}']")
    page.keyboard.press("f")
    page.wait_for_selector("#save-state:has-text('Saved: cf.')")
    page.fill("#id_version", "2")
    page.click("#promote button[type=submit]")
    page.wait_for_url("**/benchmarks/versions/*/")
    new = BenchmarkVersion.objects.get(benchmark=version.benchmark, version="2")
    assert "546 gold references" in page.inner_text("#gold-overview")
    assert "Awaiting approval" in page.inner_text("#awaiting-approval")  # a researcher's promotion waits for a lead
    added = new.gold.get(pair_id__startswith="wb")
    assert (added.query.seg_id, added.source.seg_id, added.ref_type) == (new_pair.query.seg_id, new_pair.source.seg_id, "cf.")


def test_a_chosen_unit_is_searched_and_shown_on_the_run_page(live_server, page, make_user, tmp_path):
    """The launch form offers every unit; a run launched as sentences says so on its page."""
    from core.paths import shared_data_dir

    tess = shared_data_dir() / "latin_texts" / "tesserae"
    if not tess.exists():
        pytest.skip("shared data not available")

    def cut(stem, refs, name):
        keep = set(refs)
        rows = [ln for ln in (tess / f"{stem}.tess").read_text(encoding="utf-8").splitlines()
                if ln.startswith("<") and ln.split(">", 1)[0].split()[-1] in keep]
        (tmp_path / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
        return str(tmp_path / name)

    make_user("wbunit", "researcher")
    login(page, live_server.url, "wbunit", "pw-wbunit")
    page.goto(f"{live_server.url}/workbench/")
    offered = page.eval_on_selector_all("#id_unit option", "os => os.map(o => o.value)")
    assert offered == ["line", "window-2", "window-3", "sentence"]
    page.set_input_files("#id_query_file", cut("lucan.bellum_civile", [f"2.{i}" for i in range(4, 16)], "lucan.tess"))
    page.set_input_files("#id_source_file", cut("vergil.aeneid", [f"7.{i}" for i in range(300, 330)], "aeneid.tess"))
    page.select_option("#id_unit", "sentence")
    page.fill("#id_top_k", "2")
    page.click("#detect-form button[type=submit]")
    page.wait_for_url("**/workbench/runs/*/")
    run = DetectionRun.objects.get()
    assert run.unit == "sentence"
    assert "unit sentence" in page.inner_text("#run-setup")


def test_run_page_folds_changed_parameters_and_compares_two_detections(live_server, page, make_user):
    """The run page names each method with only its parameters changed from the defaults, folded (a phone's screen
    reaches the candidates); from it, a second detection on the same texts is compared pair by pair."""
    make_user("wbcmp", "researcher")
    login(page, live_server.url, "wbcmp", "pw-wbcmp")
    page.goto(f"{live_server.url}/workbench/")
    page.set_input_files("#id_query_file", str(EXAMPLES / "hieronymus_samples.csv"))
    page.set_input_files("#id_source_file", str(EXAMPLES / "vergil_samples.csv"))
    page.select_option("#id_retriever", "bm25-lemma")  # not the default (channels): k1 is BM25's
    page.fill("#id_retriever_params", '{"k1": 1.2}')
    page.fill("#id_top_k", "3")
    page.click("#detect-form button[type=submit]")
    page.wait_for_url("**/workbench/runs/*/")
    page.wait_for_selector("#explorer-card", timeout=60000)
    first = DetectionRun.objects.get()
    summary = page.locator("#run-setup details.params summary")
    assert summary.inner_text() == "1 parameter changed from the defaults"
    assert not page.is_visible("#run-setup details.params li")  # folded
    summary.click()
    assert page.inner_text("#run-setup details.params li") == "k1 = 1.2"
    page.set_viewport_size({"width": 375, "height": 800})
    summary.click()  # folded again: the setup stays a few lines on a phone
    assert page.locator("#run-setup").bounding_box()["height"] < 120

    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/workbench/")
    page.select_option("#id_query_stored", f"doc:{first.query_document_id}")
    page.select_option("#id_source_stored", f"doc:{first.source_document_id}")
    page.select_option("#id_retriever", "tfidf-surface")
    page.fill("#id_top_k", "3")
    page.click("#detect-form button[type=submit]")
    page.wait_for_url("**/workbench/runs/*/")
    page.wait_for_selector("#explorer-card", timeout=60000)
    second = DetectionRun.objects.exclude(pk=first.pk).get()
    assert page.inner_text("#run-setup").startswith("← Workbench · tfidf-surface (default parameters)")
    assert page.locator("#run-setup details").count() == 0
    page.click("#compare-link")
    page.wait_for_url("**/workbench/compare/detections/?a=*")
    page.select_option("#id_b", str(first.pk))
    page.click("#pick button[type=submit]")
    page.wait_for_selector("#overlap")
    n_a, n_b = second.candidates.count(), first.candidates.count()
    assert page.inner_text("#overlap").startswith(f"A proposes {n_a} pairs, B {n_b}: ")
    assert page.locator("#only-a tbody tr").count() >= 1 and not page.is_visible("p.error")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "workbench-compare-detections.png"), full_page=True)
