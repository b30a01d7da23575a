"""The evaluation form's unit in Debian's chromium (issue 24): windows on Loci Similes (prose passages) are
refused with the sentence that says why and nothing is stored; windows of Lucan's lines against the Aeneid's
run, and the run page shows the unit."""
import pytest

from benchmarks.models import EvaluationRun

from .conftest import open_loci_version_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_unit_is_refused_for_prose_and_shown_for_verse(live_server, page, make_user, settings, tmp_path):
    from tests.benchmarks.test_evaluation_units import QUERY_REFS, SOURCE_REFS, TESS, _lines, import_verse_version

    if not TESS.exists():
        pytest.skip("shared data not available")
    settings.VAR_DIR = tmp_path / "var"
    open_loci_version_page(page, live_server.url, make_user, "unitres")
    offered = page.eval_on_selector_all("#id_unit option", "os => os.map(o => o.value)")
    assert offered == ["line", "window-2", "window-3", "sentence"]
    page.select_option("#id_method", "bm25-lemma")
    page.select_option("#id_unit", "window-2")
    page.fill("#id_ks", "1, 10")
    page.click("#launch button[type=submit]")
    page.wait_for_selector("text=are followed by their next line")
    assert "search them with unit 'line'" in page.inner_text("#launch")
    assert not EvaluationRun.objects.exists()

    verse = import_verse_version(tmp_path, _lines("lucan.bellum_civile", "luc.", QUERY_REFS),
                                 _lines("vergil.aeneid", "verg. aen.", SOURCE_REFS))
    page.goto(f"{live_server.url}/benchmarks/versions/{verse.pk}/")
    page.select_option("#id_method", "bm25-lemma")
    page.select_option("#id_unit", "window-2")
    page.select_option("#id_pool", "corpus")
    page.fill("#id_ks", "1, 10")
    page.click("#launch button[type=submit]")
    page.wait_for_url("**/benchmarks/runs/*/")
    page.wait_for_selector("#table8", timeout=60000)  # the job ran (eager) or the page reloads until it has
    run = EvaluationRun.objects.get()
    assert run.unit == "window-2" and run.report["unit"] == "window-2"
    assert page.inner_text("#run-unit").startswith("unit window-2 (each hit scored on the segments it covers")
