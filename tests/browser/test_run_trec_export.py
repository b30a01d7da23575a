"""A stored Loci Similes evaluation run's TREC run and qrels, downloaded from its page in Debian's chromium: the
files read back with Similia's TREC reader and score as the run's own per-query rows say (issue 25)."""
import pytest

from benchmarks.models import EvaluationRun
from benchmarks.suite import interchange as IX
from benchmarks.suite import measures as MS

from .conftest import open_loci_version_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_download_a_runs_trec_run_and_qrels_from_its_page(live_server, page, make_user, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    open_loci_version_page(page, live_server.url, make_user, "trecres")
    page.select_option("#id_method", "bm25-lemma")
    page.fill("#id_ks", "1, 10")
    page.click("#launch button[type=submit]")
    page.wait_for_url("**/benchmarks/runs/*/")
    page.wait_for_selector("#export-trec", timeout=120000)  # the report exists: the downloads are offered
    run = EvaluationRun.objects.get()
    assert "TREC run (top 10 per query)" in page.inner_text("#downloads")
    with page.expect_download() as info:
        page.click("#export-trec")
    download = info.value
    assert download.suggested_filename == f"loci-run-{run.pk}.trec"
    text = open(download.path(), encoding="utf-8").read()
    rows = IX.read_run("trec", text)
    assert {r.line for r in rows} == set(range(1, len(rows) + 1)) and text.split("\n", 1)[0].endswith(
        " similia-bm25-lemma")
    by_query: dict[str, list] = {}
    for r in rows:
        by_query.setdefault(r.query, []).append(r)
    assert set(by_query) == {row["query_id"] for row in run.per_query}
    assert all([r.rank for r in v] == list(range(1, len(v) + 1)) and len(v) <= 10 for v in by_query.values())
    with page.expect_download() as info:
        page.click("#export-qrels")
    qrels = open(info.value.path(), encoding="utf-8").read().splitlines()
    gold: dict[str, dict[str, int]] = {}
    for line in qrels:
        q, zero, s, one = line.split(" ")
        assert (zero, one) == ("0", "1")
        gold.setdefault(IX.unquote(q), {})[IX.unquote(s)] = 1
    assert sum(len(v) for v in gold.values()) == len({(p["query_id"], p["source_id"]) for p in run.report["per_pair"]})
    # the downloaded run scored on the downloaded qrels: each query's reciprocal rank within the head, as stored
    order = {q: [r.source for r in v] for q, v in by_query.items()}
    rr = MS.per_query(order, gold, ["RR@10"])["RR@10"]
    stored = {row["query_id"]: row["rr"] for row in run.per_query}
    assert all(abs(rr[q] - (stored[q] if stored[q] >= 0.1 else 0.0)) < 1e-9 for q in rr)
    # and its mean is the suite's stored bm25-lemma MRR@10 on the same gold (perf/expected/suite_short.yaml)
    from pathlib import Path

    from benchmarks.suite import expected as E

    spec = E.load(Path(__file__).resolve().parents[2] / "perf" / "expected" / "suite_short.yaml")
    assert abs(MS.mean(rr) - spec["figures"]["loci-similes"]["bm25-lemma"]["RR@10"]) <= 0.00005
