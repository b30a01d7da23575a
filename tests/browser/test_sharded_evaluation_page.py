"""Launching a sharded Loci Similes evaluation from the version page in Debian's chromium: the form offers
``shards`` with its bounds, the run is ranked in that many shards and its page shows the report (issue 16)."""
import pytest

from benchmarks.models import EvaluationRun
from jobs.models import Job

from .conftest import open_loci_version_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_launch_a_sharded_evaluation_and_read_its_report(live_server, page, make_user, settings, tmp_path):
    from benchmarks.services.runs import MAX_SHARDS

    settings.VAR_DIR = tmp_path / "var"
    open_loci_version_page(page, live_server.url, make_user, "shardres")
    shards = page.locator("#id_shards")
    assert (shards.get_attribute("min"), shards.get_attribute("max")) == ("1", str(MAX_SHARDS))
    assert "pool is fitted once" in page.inner_text("#launch")
    page.select_option("#id_method", "bm25-lemma")
    page.fill("#id_ks", "1, 10")
    page.fill("#id_shards", str(MAX_SHARDS + 1))
    page.click("#launch button[type=submit]")  # the browser holds it back: out of bounds
    assert page.evaluate("document.querySelector('#id_shards').validity.rangeOverflow")
    assert not EvaluationRun.objects.exists()
    page.fill("#id_shards", "3")
    page.click("#launch button[type=submit]")
    page.wait_for_url("**/benchmarks/runs/*/")
    page.wait_for_selector("#run-shards", timeout=60000)  # the job ran (eager) or the page reloads until it has
    run = EvaluationRun.objects.get()
    assert run.report and run.summary["recall@10"] > 0.5
    assert Job.objects.filter(parent=run.job_id, status="succeeded").count() == 3
    text = page.inner_text("#run-shards")
    assert "Ranked in 3 shards" in text and "fitted 1 time" in text
    assert "recall" in page.inner_text("#table8").lower()
    assert f"{run.summary['recall@10']:.3f}"[:4] in page.inner_text("#table8")
