"""Search units on real Aeneid lines: windows and sentences keep their line ids, hits map back to lines."""
import pytest

from detection.latin.units import UnitError, check_unit, line_rankings, make_units

IDS = ["verg. aen. 1.1", "verg. aen. 1.2", "verg. aen. 1.3", "verg. aen. 1.4"]
LINES = ["Arma virumque cano, Troiae qui primus ab oris", "Italiam, fato profugus, Laviniaque venit",
         "litora, multum ille et terris iactatus et alto", "vi superum saevae memorem Iunonis ob iram;"]


def test_lines_and_windows_keep_the_line_ids():
    assert [u.lines for u in make_units(IDS, LINES, "line")] == [(i,) for i in IDS]
    w2 = make_units(IDS, LINES, "window-2")
    assert [u.id for u in w2] == IDS  # every line starts a window
    assert w2[0].lines == ("verg. aen. 1.1", "verg. aen. 1.2") and w2[-1].lines == ("verg. aen. 1.4",)
    assert w2[0].text == LINES[0] + "\n" + LINES[1]
    w3 = make_units(IDS, LINES, "window-3")
    assert w3[1].lines == ("verg. aen. 1.2", "verg. aen. 1.3", "verg. aen. 1.4")


def test_sentences_cover_the_lines_they_touch():
    s = make_units(IDS, LINES, "sentence")
    assert len(s) == 1 and s[0].lines == tuple(IDS) and s[0].text.endswith("iram;")
    s = make_units(["a", "b"], ["Tantae molis erat. Romanam condere", "gentem."], "sentence")
    assert [(u.id, u.lines) for u in s] == [("a", ("a",)), ("a#2", ("a", "b"))]


def test_window_hits_are_reported_on_the_lines_they_cover():
    q = make_units(["q.1", "q.2"], ["x", "y"], "window-2")
    s = make_units(IDS, LINES, "window-2")
    ranked, scores = line_rankings(q, s, [[2, 1, -1], [0, -1, -1]], [[3.0, 2.0, 0.0], [1.0, 0.0, 0.0]])
    # q.1's best hit is the window 1.3-1.4, then 1.2-1.3 (1.3 already listed at its better hit)
    assert ranked["q.1"] == ["verg. aen. 1.3", "verg. aen. 1.4", "verg. aen. 1.2"]
    assert scores["q.1"] == [3.0, 3.0, 2.0]
    assert ranked["q.2"] == ["verg. aen. 1.1", "verg. aen. 1.2"]
    assert line_rankings(q, s, [[2, 1, -1], [0, -1, -1]], depth=1)[0]["q.1"] == ["verg. aen. 1.3"]


@pytest.mark.parametrize("bad", ["lines", "window-4", "window-1", "", "../x"])
def test_bad_unit_names_the_choices(bad):
    with pytest.raises(UnitError, match="line, window-2, window-3, sentence"):
        check_unit(bad)
