"""The explorer in Debian's chromium (issue 24): a parallel's channels, contributions, uniqueness and rarity with
its words coloured by channel; the whole run ordered by score; a typed note kept when another row is clicked,
across a reload, and when the server refuses the verdict; Esc leaves the note box; many candidates a screen;
the run page and the explorer at 375 px without horizontal scrolling."""
from pathlib import Path

import numpy as np
import pytest

from workbench.models import Candidate, Verdict

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "data" / "locisimiles" / "package_examples"
SHOTS = ROOT / "var" / "screenshots"

#: the engine's explanation of Jerome's quotation of Aen. 10.636 (the shape `detect` gives every candidate)
QUOTED = {"channels": [
    {"name": "lemma", "score": 2.0, "weight": 0.6, "contribution": 1.2, "matches": [["mens", "mens"], ["sonus", "sonus"]]},
    {"name": "form", "score": 1.0, "weight": 0.3, "contribution": 0.3, "matches": [["sonum", "sonum"]]},
    {"name": "semantic", "score": 0.05, "weight": 0.1, "contribution": 0.0, "matches": []}],
    "uniqueness": 1, "rarity": {"mens": 3.5, "sonus": 6.25}, "query_lines": ["hier. adv. iovin. 1.1"],
    "source_lines": ["verg. aen. 10.636"]}


@pytest.fixture
def explained_run(make_user):
    """bm25-lemma over the package's 11 Jerome queries × 10 Virgil lines (top 4), run in process; its candidates
    stored again through the result store with the explanation above on the quotation (the others have none)."""
    from detection.candidates import Candidates
    from jobs.runner import run_job
    from workbench.services import detection_run_create, detection_run_store, document_upload

    owner = make_user("expl", "researcher")
    docs = [document_upload(name=n, data=(EXAMPLES / n).read_bytes(), owner=owner)
            for n in ("hieronymus_samples.csv", "vergil_samples.csv")]
    run = detection_run_create(query_document=docs[0], source_document=docs[1], retriever="bm25-lemma", top_k=4,
                               owner=owner)
    assert run_job(run.job_id) == "succeeded"
    rows = list(run.candidates.select_related("query", "source").order_by("query_position", "rank"))
    cands = Candidates(np.array([c.query_position for c in rows]), np.array([c.source.position for c in rows]),
                       np.array([c.rank for c in rows]), np.array([c.score for c in rows]), None, [""] * len(rows),
                       np.array([c.shared_lemmas for c in rows]), [c.bucket for c in rows])
    cands.explain = [QUOTED if (c.query.seg_id, c.source.seg_id) == ("hier. adv. iovin. 1.1", "verg. aen. 10.636")
                     else {} for c in rows]
    detection_run_store(run=run, candidates=cands, merged={"shards": 1, "shards_per_worker": {"w": 1}},
                        progress=lambda f, m="": None, log=lambda m: None)
    return run


def _open(page, live_server, run, query=""):
    login(page, live_server.url, "expl", "pw-expl")
    page.goto(f"{live_server.url}/workbench/runs/{run.pk}/{query}")
    page.wait_for_selector("#cand-table")


def _no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def _rows_on_screen(page) -> int:
    """Candidate rows wholly inside the viewport once the list's top is scrolled to the top of the screen."""
    page.evaluate("document.getElementById('cand-table').scrollIntoView({block: 'start'})")
    return page.evaluate("""() => Array.from(document.querySelectorAll('tr.cand')).filter((r) => {
        const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= window.innerHeight; }).length""")


def test_a_parallel_shows_its_channels_contributions_uniqueness_and_rarity(live_server, page, explained_run):
    quoted = Candidate.objects.get(run=explained_run, query__seg_id="hier. adv. iovin. 1.1",
                                   source__seg_id="verg. aen. 10.636")
    _open(page, live_server, explained_run)
    page.click(f"tr.cand[data-id='{quoted.pk}']")
    page.wait_for_selector("#d-channels li[data-channel='lemma']")
    bars = page.eval_on_selector_all("#d-channels li", """lis => lis.map(li => [li.dataset.channel,
        li.querySelector('.contribution').textContent, li.querySelector('.bar span').style.width, li.className])""")
    assert bars == [["lemma", "1.200", "80%", ""], ["form", "0.300", "20%", ""], ["semantic", "0.000", "0%", "off"]]
    assert "mens / mens" not in page.inner_text("#d-channels") and "mens, sonus" in page.inner_text("#d-channels")
    # the matched words are coloured by their channels, on both sides
    coloured = page.eval_on_selector_all("#d-source mark.ch", "ms => ms.map(m => [m.textContent, m.dataset.channels])")
    assert ["mente", "lemma"] in coloured and ["sonum", "lemma form"] in coloured
    assert page.eval_on_selector("#d-query mark.ch[data-channels='lemma form']", "m => m.textContent") == "sonum"
    lemma_colour = page.eval_on_selector("#d-channels li[data-channel='lemma'] .swatch", "s => getComputedStyle(s).backgroundColor")
    assert page.eval_on_selector("#d-source mark.ch", "m => getComputedStyle(m).backgroundColor") == lemma_colour
    assert page.inner_text("#d-unique") == "Shared words: shared by 1 other passage: a rare combination."
    assert page.inner_text("#d-rarity") == "Matched words: sonus common · mens common"
    assert page.get_attribute("#d-rarity", "title") == (
        "rarity, the log of reference-corpus words per occurrence: sonus 6.25, mens 3.50")
    assert page.is_hidden("#d-no-explain")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "workbench-explained-parallel.png"), full_page=True)
    # a candidate without an explanation says so and keeps the shared-lemma marks
    other = Candidate.objects.filter(run=explained_run, explain={}).order_by("query_position", "rank").first()
    page.click(f"tr.cand[data-id='{other.pk}']")
    page.wait_for_selector(f"#detail-body[data-id='{other.pk}']")
    assert page.is_visible("#d-no-explain") and page.is_hidden("#d-explain")


def test_the_whole_run_ordered_by_score(live_server, page, explained_run):
    _open(page, live_server, explained_run)
    page.click("#order-score")
    page.wait_for_url("**order=score**")
    page.wait_for_selector("table.cands.by-score")
    expected = sorted(explained_run.candidates.all(), key=lambda c: (-c.score, c.query_position, c.rank, c.pk))
    shown = [int(i) for i in page.eval_on_selector_all("tr.cand", "rs => rs.map(r => r.dataset.id)")]
    assert shown == [c.pk for c in expected][:len(shown)] and len(shown) == min(50, len(expected))
    assert page.eval_on_selector_all("tr.cand td:first-child", "tds => tds.slice(0, 3).map(t => t.textContent)") == [
        "1", "2", "3"]
    queries = page.eval_on_selector_all("tr.cand", "rs => rs.slice(0, 10).map(r => r.dataset.query)")
    assert len(set(queries)) > 1  # the run's best, not one query's list
    page.keyboard.press("j")  # keys work in this order too
    page.wait_for_selector(f"#detail-body[data-id='{expected[0].pk}']")
    # the order survives a filter, and the filter form can switch back
    page.keyboard.press("/")  # unfolds the filters and puts the cursor in the search box
    assert page.evaluate("document.activeElement.id") == "search"
    page.fill("#search", "a")
    page.click("#filters button[type=submit]")
    page.wait_for_url("**q=a**")
    assert "order=score" in page.url and page.is_visible("table.cands.by-score")
    page.select_option("#order", "query")
    page.click("#filters button[type=submit]")
    page.wait_for_selector("tr.qhead")


def test_a_typed_note_is_kept_per_row_and_esc_leaves_the_box(live_server, page, explained_run):
    _open(page, live_server, explained_run)
    first, second = page.eval_on_selector_all("tr.cand", "rs => rs.slice(0, 2).map(r => r.dataset.id)")
    page.click(f"tr.cand[data-id='{first}']")
    page.wait_for_selector(f"#detail-body[data-id='{first}']")
    page.click("#d-note")
    page.keyboard.type("cf. Serv. ad loc.")
    assert page.inner_text("#note-state") == "draft, not saved yet: a verdict saves it"
    page.keyboard.press("Escape")  # leaves the note box: the keys act on the list again
    assert page.evaluate("document.activeElement.id") != "d-note"
    page.keyboard.press("j")
    page.wait_for_selector(f"#detail-body[data-id='{second}']")
    assert page.input_value("#d-note") == "" and page.is_visible(f"tr.cand[data-id='{first}'] .draft-flag")
    page.click(f"tr.cand[data-id='{first}']")
    page.wait_for_selector(f"#detail-body[data-id='{first}']")
    assert page.input_value("#d-note") == "cf. Serv. ad loc."  # the draft came back with its row
    page.reload()  # and survives a reload
    page.click(f"tr.cand[data-id='{first}']")
    page.wait_for_selector(f"#detail-body[data-id='{first}']")
    assert page.input_value("#d-note") == "cf. Serv. ad loc."

    # a verdict the server refuses is not reported saved, and the draft stays
    page.route("**/verdict/", lambda route: route.fulfill(status=503, content_type="application/json",
                                                          body='{"detail": "database unavailable"}'))
    page.keyboard.press("c")
    page.wait_for_selector("#save-state.bad")
    assert page.inner_text("#save-state") == "Not saved: database unavailable" and not Verdict.objects.exists()
    assert page.is_visible(f"tr.cand[data-id='{first}'] .draft-flag")
    page.unroute("**/verdict/")
    page.keyboard.press("c")
    page.wait_for_selector("#save-state:has-text('Saved: cit.')")
    assert Verdict.objects.get().note == "cf. Serv. ad loc."
    assert page.is_hidden(f"tr.cand[data-id='{first}'] .draft-flag") and page.inner_text("#note-state") == ""
    # the saved note is the box's text when the row is opened again (not an empty box)
    page.click(f"tr.cand[data-id='{second}']")
    page.wait_for_selector(f"#detail-body[data-id='{second}']")
    page.click(f"tr.cand[data-id='{first}']")
    page.wait_for_selector(f"#detail-body[data-id='{first}']")
    assert page.input_value("#d-note") == "cf. Serv. ad loc."
    # "e" opens the note box from the list
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.id") == "d-note"


def test_many_candidates_a_screen(live_server, page, explained_run):
    _open(page, live_server, explained_run)
    assert _rows_on_screen(page) >= 15  # 1200 × 900


@pytest.mark.parametrize("query", ["", "?order=score"])
def test_run_page_and_explorer_hold_at_375_px(live_server, browser, explained_run, query):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    try:
        _open(page, live_server, explained_run, query)
        assert _no_horizontal_scroll(page)
        assert _rows_on_screen(page) > 3
        assert page.is_hidden("#detail")  # no empty panel over the list
        quoted = Candidate.objects.get(run=explained_run, source__seg_id="verg. aen. 10.636",
                                       query__seg_id="hier. adv. iovin. 1.1")
        page.click(f"tr.cand[data-id='{quoted.pk}']")
        page.wait_for_selector("#d-channels li[data-channel='lemma']")
        assert page.is_visible("#detail") and _no_horizontal_scroll(page)
        box = page.eval_on_selector("#detail", "d => { const b = d.getBoundingClientRect(); return [b.left, b.right, b.bottom]; }")
        assert box[0] >= 0 and box[1] <= 375 and box[2] <= 740  # the sheet is on the screen
        # the selected row stays visible above the sheet
        row = page.eval_on_selector("tr.cand.selected", "r => r.getBoundingClientRect().bottom")
        sheet_top = page.eval_on_selector("#detail", "d => d.getBoundingClientRect().top")
        assert row <= sheet_top
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"workbench-375{'-by-score' if query else ''}.png"))
        page.keyboard.press("Escape")  # closes the sheet
        assert page.is_hidden("#detail")
        page.goto(f"{live_server.url}/workbench/")  # the launch page too
        assert _no_horizontal_scroll(page)
    finally:
        context.close()


def test_the_launch_form_lists_the_installed_models_and_a_default_runs(live_server, page, make_user, settings,
                                                                      tmp_path):
    """After `make run` the shipped Latin Library vectors and the demo's are installed, not the hybrid's default:
    the form says so and which vectors it will use, the run succeeds with them and its page carries the note."""
    from detection.demo import load_demo_vectors
    from detection.methods.infrastructure import model_store
    from workbench.models import DetectionRun

    settings.MODELS_DIR = tmp_path / "models"
    with model_store.using(settings.MODELS_DIR):
        load_demo_vectors()
        make_user("form", "researcher")
        login(page, live_server.url, "form", "pw-form")
        page.goto(f"{live_server.url}/workbench/")
        page.select_option("#id_retriever", "hybrid")
        assert ("model (model, default \"la-lemma-cbow200\"; installed: la-lemma-cbow100, la-lemma-demo — "
                "la-lemma-cbow200 is not installed, so the run uses la-lemma-cbow100)") in page.inner_text("#param-help")
        page.set_input_files("#id_query_file", str(EXAMPLES / "hieronymus_samples.csv"))
        page.set_input_files("#id_source_file", str(EXAMPLES / "vergil_samples.csv"))
        page.fill("#id_top_k", "3")
        page.click("#detect-form button[type=submit]")
        page.wait_for_url("**/workbench/runs/*/")
        page.wait_for_selector("#explorer-card", timeout=60000)
        run = DetectionRun.objects.get()
        assert run.status == "succeeded" and run.retriever_config_params["model"] == "la-lemma-cbow100"
        assert "so this run uses 'la-lemma-cbow100'" in page.inner_text("#run-notes")


def test_a_channels_run_explains_its_parallels_in_the_page(live_server, page, make_user):
    """End to end: the `channels` retriever through the detection job; the quotation's channels, their bars and
    its coloured words are on the page."""
    from jobs.runner import run_job
    from workbench.services import detection_run_create, document_upload

    owner = make_user("expl", "researcher")
    docs = [document_upload(name=n, data=(EXAMPLES / n).read_bytes(), owner=owner)
            for n in ("hieronymus_samples.csv", "vergil_samples.csv")]
    run = detection_run_create(query_document=docs[0], source_document=docs[1], retriever="channels", top_k=3,
                               owner=owner)
    run_job(run.job_id)
    run.refresh_from_db()
    assert run.status == "succeeded", run.job.error
    quoted = Candidate.objects.get(run=run, query__seg_id="hier. adv. iovin. 1.1", source__seg_id="verg. aen. 10.636")
    _open(page, live_server, run)
    page.click(f"tr.cand[data-id='{quoted.pk}']")
    page.wait_for_selector("#d-channels li[data-channel='quote']")
    names = page.eval_on_selector_all("#d-channels li", "lis => lis.map(li => li.dataset.channel)")
    assert names == [c["name"] for c in quoted.explain["channels"]]  # largest contribution first, as stored
    widths = page.eval_on_selector_all("#d-channels li .bar span", "ss => ss.map(s => parseFloat(s.style.width))")
    assert widths == sorted(widths, reverse=True) and sum(widths) == pytest.approx(100, abs=0.5)
    marked = page.eval_on_selector_all("#d-source mark.ch", "ms => ms.map(m => [m.textContent, m.dataset.channels])")
    assert any(word == "mente" and "quote" in chans.split() for word, chans in marked)
    assert "Matched words: sonum" in page.inner_text("#d-rarity")
    u = quoted.explain["uniqueness"]  # measured by the engine: how many other loci share the matched words
    word = "a rare" if u <= 10 else "an uncommon" if u <= 100 else "a common"
    assert isinstance(u, int) and page.inner_text("#d-unique") == (
        "Shared words: no other passage has these words together: unique." if u == 0 else
        f"Shared words: shared by {u:,} other passage{'' if u == 1 else 's'}: {word} combination.")
    over = quoted.explain["uniqueness_corpus"]  # The Latin Library's loci, or the searched sources without the index
    assert over and page.get_attribute("#d-unique", "title") == f"counted over {over}"
    page.screenshot(path=str(SHOTS / "workbench-channels-run.png"), full_page=True)
