"""Report pages (issue 14): chart labels that do not overprint, one row for the k beyond the pool's depth, the
pilot chart's best-F1 label clear of its title, gold texts without the file's CSV quotes."""
import itertools
import re

import pytest

from benchmarks.charts import _collapse_same_rows
from benchmarks.greek_sts.plots import threshold_plot_svg
from benchmarks.loci.plots import line_chart_svg


def _labels(svg: str, y: str) -> list[float]:
    return [float(x) for x in re.findall(rf'<text x="([0-9.]+)" y="{y}" text-anchor="middle">', svg)]


def test_crowded_k_ticks_do_not_overprint():
    ks = [1, 5, 10, 20, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    svg = line_chart_svg([{"label": "F1", "x": ks, "y": [0.5] * len(ks)}], title="P/R/F1 vs k")
    xs = _labels(svg, "312")  # height 340 − bottom 44 + 16
    assert len(xs) < len(ks) and xs[0] < xs[-1]
    assert all(b - a >= 22 for a, b in itertools.pairwise(xs))
    assert ">1000</text>" in svg and ">1</text>" in svg


def test_rows_beyond_the_pool_depth_collapse_into_one():
    same = {"ret_tp": 5.0, "ret_fp": 100.0, "ret_f1": 0.1}
    rows = [{"k": 10, "ret_tp": 4.0, "ret_fp": 10.0, "ret_f1": 0.3}, {"k": 100, **same}, {"k": 200, **same},
            {"k": 1000, **same}]
    out = _collapse_same_rows(rows)
    assert [(r["k"], r.get("k_to")) for r in out] == [(10, None), (100, 1000)]


def test_pilot_best_label_is_clear_of_the_title():
    rows = [{"threshold": t / 20, "precision": 1.0, "recall": 1.0, "f1": 1.0 if t == 18 else 0.5} for t in range(21)]
    svg = threshold_plot_svg(rows, title="levenshtein: P/R/F1 vs threshold (verse level)")
    label_y = float(re.search(r'y="([0-9.]+)" font-size="10" text-anchor="(?:start|end)">best F1', svg).group(1))
    assert label_y > 14 + 12  # the title sits on y = 14


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
