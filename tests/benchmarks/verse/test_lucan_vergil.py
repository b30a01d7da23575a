"""The Lucan -> Virgil benchmark read from the real files, and its measure on hand-computed rankings."""
import math

import pytest

from benchmarks.verse.lucan_vergil import VerseBenchmark, evaluate_verse, load_lucan_vergil
from core.paths import shared_data_dir
from detection.latin.errors import InputError

needs_data = pytest.mark.skipif(not (shared_data_dir() / "lucan_vergil" / "all_lucan.txt").is_file(),
                                reason="shared data folder not here")


@pytest.fixture(scope="module")
def bench():
    return load_lucan_vergil()


@needs_data
def test_real_files(bench):
    assert len(bench.query_ids) == len(bench.query_texts) == 7366  # Lucan books 2-10
    assert bench.query_ids[0] == "luc. 2.1" and bench.query_ids[-1].startswith("luc. 10.")
    assert len(bench.source_ids) == 9896 and bench.source_ids[-1] == "verg. aen. 12.952"
    assert bench.query_texts[bench.query_ids.index("luc. 2.5")].startswith("Sollicitis")
    # the first parallel of the file (Fantham): luc. 2.5 ~ verg. aen. 12.85; 812 distinct pairs over 617 lines
    assert "verg. aen. 12.85" in bench.gold["luc. 2.5"]
    assert bench.authorities[("luc. 2.5", "verg. aen. 12.85")] == "Fantham"
    assert len(bench.gold) == 617 and bench.n_pairs == 812
    # upstream names aen. 8.860 (book 8 has 731 lines): kept out and said
    assert bench.skipped == ["all_lucan.txt:125: verg. aen. 8.860 is not a line of the texts"]


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="all_lucan.txt"):
        load_lucan_vergil(tmp_path)


def _toy():
    q = ["luc. 2.1", "luc. 2.2", "luc. 2.3", "luc. 3.1"]
    s = ["verg. aen. 1.1", "verg. aen. 1.2", "verg. aen. 1.3", "verg. aen. 1.4", "verg. aen. 2.1"]
    gold = {"luc. 2.1": {"verg. aen. 1.2"}, "luc. 3.1": {"verg. aen. 2.1", "verg. aen. 1.1"}}
    return VerseBenchmark("toy", q, ["x"] * 4, s, ["y"] * 5, gold)


def test_tolerance_counts_the_next_lines_on_both_sides():
    b = _toy()
    # luc. 2.1's gold aen. 1.2 is not in its own list; luc. 2.2 (next line) ranks aen. 1.3 (next line) second.
    ranked = {"luc. 2.1": ["verg. aen. 1.4"], "luc. 2.2": ["verg. aen. 1.1", "verg. aen. 1.3"],
              "luc. 3.1": ["verg. aen. 1.1"]}
    rep = evaluate_verse(b, ranked, tolerance=1, ks=(1, 2))
    # q 2.1: rank 2 (found at k=2); q 3.1: aen. 1.1 at rank 1, aen. 2.1 never -> 1/2
    assert rep["per_query"]["R@1"] == pytest.approx((0 + 0.5) / 2)
    assert rep["per_query"]["R@2"] == pytest.approx((1 + 0.5) / 2)
    assert rep["per_query"]["MRR@10"] == pytest.approx((0.5 + 1) / 2)
    strict = evaluate_verse(b, ranked, tolerance=0, ks=(2,))
    assert strict["per_query"]["R@2"] == pytest.approx((0 + 0.5) / 2)
    # a line does not run into the next book: luc. 2.3's window stops at book 2 (3.1 is another book)
    assert evaluate_verse(b, {"luc. 2.3": ["verg. aen. 1.1"]}, tolerance=2)["per_query"]["R@1"] == 0


def test_global_recall_orders_the_whole_run_by_score():
    b = _toy()
    ranked = {"luc. 2.1": ["verg. aen. 1.4", "verg. aen. 1.2"], "luc. 3.1": ["verg. aen. 2.1", "verg. aen. 1.1"]}
    scores = {"luc. 2.1": [9.0, 8.0], "luc. 3.1": [5.0, 1.0]}
    rep = evaluate_verse(b, ranked, scores=scores, tolerance=0, global_ns=(1, 2, 3))
    # whole run: (2.1, 1.4) 9, (2.1, 1.2)* 8, (3.1, 2.1)* 5, (3.1, 1.1)* 1 -> gold at global ranks 2, 3, 4
    assert rep["global_recall"] == {"1": 0.0, "2": pytest.approx(1 / 3), "3": pytest.approx(2 / 3), "full": 1.0}
    # without scores: rank by rank across queries -> (2.1,1.4), (3.1,2.1)*, (2.1,1.2)*, (3.1,1.1)*
    plain = evaluate_verse(b, ranked, tolerance=0, global_ns=(2,))
    assert plain["global_recall"]["2"] == pytest.approx(1 / 3)
    assert rep["n_pairs"] == 3 and rep["n_retrieved_pairs"] == 4


def test_empty_run_finds_nothing():
    rep = evaluate_verse(_toy(), {})
    assert rep["per_query"]["R@1000"] == 0 and rep["global_recall"]["full"] == 0
    assert not math.isnan(rep["per_query"]["MRR@10"])
