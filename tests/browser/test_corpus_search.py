"""Corpus search in Debian's chromium (issue 38): a lead-researcher builds a small corpus from the page (a job),
searches a line with every channel explained and matched words marked on both sides, opens the permalink and an
export, reads the work page by page, follows a line's "similar passages", and meets the refusals (too long, an
index to rebuild)."""
import tarfile

import pytest

from detection.models import SearchCorpus
from detection.services import corpora
from tests.detection.corpus.conftest import small_corpus_dir  # noqa: F401,F811  (the small real corpus)

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def small_source(settings, tmp_path, small_corpus_dir, monkeypatch):  # noqa: F811
    """The small real corpus (tests/detection/corpus/conftest.py) as the shipped source the page builds from."""
    settings.VAR_DIR = tmp_path / "var"
    arc = tmp_path / "small.tar.xz"
    with tarfile.open(arc, "w:xz") as tf:
        for f in sorted(small_corpus_dir.iterdir()):
            tf.add(f, arcname=f.name)
    monkeypatch.setitem(corpora.SOURCES, "tesserae-la", arc)
    return arc


def test_build_search_read_and_refusals(live_server, page, make_user, small_source):
    make_user("corp", "lead", "researcher")
    login(page, live_server.url, "corp", "pw-corp")
    page.click("nav >> text=Corpora")
    page.wait_for_url("**/corpora/")
    assert "No corpus yet" in page.inner_text("#corpora")
    page.fill("#id_name", "small")
    page.select_option("#id_subset", "all")
    with page.expect_navigation():
        page.click("#build button[type=submit]")
    assert "The build of small queued (job" in page.inner_text("ul.messages")
    row = page.locator("tr[data-corpus=small]")
    assert "ready" in row.inner_text()  # the job ran (the test settings' eager worker)
    row.locator("summary").click()
    assert "bad.carmen.tess, line 2" in row.locator("ul.skipped").inner_text()

    row.locator("text=search").click()
    page.wait_for_url("**/corpora/small/search/")
    page.fill("#q", "formosam resonare doces Amaryllida silvas")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#results")
    assert "own work vergil.eclogues left out" in page.inner_text("#summary")
    assert page.locator("li.hit[data-work='vergil.eclogues']").count() == 0
    page.check("input[name=include_own]")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#results")
    first = page.locator("li.hit").first
    assert "verg. ecl. 1.5" in first.inner_text()
    assert "formosam" in first.locator("p.segment mark").all_inner_texts()
    assert "Amaryllida" in first.locator("p.query mark").all_inner_texts()
    assert first.locator("tr[data-channel=lemma]").count() == 1
    assert "siluas → siluas" in first.locator("tr[data-channel=lemma]").inner_text()

    permalink = page.get_attribute("#permalink", "href")
    page.goto(permalink)
    assert "verg. ecl. 1.5" in page.locator("li.hit").first.inner_text()
    with page.expect_download() as dl:
        page.click("#export-csv")
    text = open(dl.value.path(), encoding="utf-8").read()
    assert text.startswith("rank,citation,work,ref,score,text") and "verg. ecl. 1.5" in text

    page.locator("li.hit").first.locator("a").first.click()
    page.wait_for_url("**/corpora/small/works/vergil.eclogues/**")
    assert "marked" in (page.get_attribute("tr[id='line-1.5']", "class") or "")
    assert "828 lines · cited as verg. ecl. · page 1 of 9" in page.inner_text("main")
    page.click("a[rel=next]")
    page.wait_for_url("**page=2")
    assert page.inner_text("tr[id='line-2.18'] td:nth-child(2)").startswith("alba ligustra cadunt")
    # what the link shows while the search is on its way (forms.js), kept across the navigation in sessionStorage
    page.evaluate("""document.addEventListener("click", (ev) => { const a = ev.target.closest("a.similar");
        if (a) sessionStorage.setItem("shown", a.getAttribute("aria-busy") + " " + a.textContent); })""")
    page.locator("tr[id='line-2.18'] a.similar").click()
    page.wait_for_selector("#results")
    assert "own work vergil.eclogues left out" in page.inner_text("#summary")
    assert page.input_value("#q").startswith("alba ligustra cadunt")
    assert page.evaluate("sessionStorage.getItem('shown')") == "true Working…"

    page.fill("#q", "arma " * 90)  # a long paste is kept whole, and refused by the server saying so
    assert len(page.input_value("#q")) == 450
    page.click("#search-form button[type=submit]")
    assert "the query has 449 characters; the limit is 400" in page.inner_text("#search-error")
    assert page.input_value("#q") == "arma " * 90
    from detection.methods import registry

    SearchCorpus.objects.filter(name="small").update(
        config=registry.configure("channels", {"rare_min": 6.0}).to_json())
    page.fill("#q", "arma virumque cano")
    page.click("#search-form button[type=submit]")
    assert "rebuild" in page.inner_text("#search-error")
    response = page.goto(f"{live_server.url}/corpora/nothing/search/?q=arma")
    assert response.status == 404 and "There is no corpus named 'nothing'." in page.inner_text("main")
