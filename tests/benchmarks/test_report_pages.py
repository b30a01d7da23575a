"""Report pages (issue 14): k values on the P/R/F1 chart far enough apart not to overprint, one table row for the
k beyond the pool's depth, gold texts without the file's CSV quotes, no title inside the pilot chart."""
import pytest

from benchmarks.charts import _collapse_same_rows, _thin_sweep


def test_rows_beyond_the_pool_depth_collapse_into_one():
    same = {"ret_tp": 5.0, "ret_fp": 100.0, "ret_f1": 0.1}
    rows = [{"k": 10, "ret_tp": 4.0, "ret_fp": 10.0, "ret_f1": 0.3}, {"k": 100, **same}, {"k": 200, **same},
            {"k": 1000, **same}]
    out = _collapse_same_rows(rows)
    assert [(r["k"], r.get("k_to")) for r in out] == [(10, None), (100, 1000)]


def test_the_prf_chart_gets_k_values_far_enough_apart():
    ks = [1, 5, 10, 20, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    pairwise = {"sweep": {"all": [{"k": k} for k in ks]}, "table4": []}
    assert [r["k"] for r in _thin_sweep(pairwise, "all")["sweep"]["all"]] == [1, 5, 10, 20, 50, 100, 200, 400, 1000]
    assert len(pairwise["sweep"]["all"]) == len(ks)  # the table's rows are untouched


@pytest.mark.django_db
def test_gold_set_texts_have_no_csv_quotes(client, users):
    from benchmarks.services import gold_set_import_file
    from tests.benchmarks.conftest import STS_FILE

    gold_set, _ = gold_set_import_file(path=STS_FILE, name="dbbe-sts")
    texts = set(gold_set.pairs.values_list("candidate_text", flat=True))
    assert "κατὰ μωσῆν ἰσόθεον φαραωκτόνον ἐσθλόν," in texts
    assert not any(t.startswith('"') for t in texts)
    client.force_login(users["researcher"])
    assert "&quot;κατὰ μωσῆν" not in client.get(f"/benchmarks/gold-sets/{gold_set.pk}/").content.decode()
