"""The product's size is held: scripts/line_budget.py counts code lines one way (no blanks, comments or
docstrings), long and wide functions, and the product stays within the budget the script states."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("line_budget", ROOT / "scripts" / "line_budget.py")
line_budget = importlib.util.module_from_spec(spec)
spec.loader.exec_module(line_budget)

SAMPLE = '''"""A module docstring
over two lines."""
import os  # a comment after code counts as code


# a comment line


def wide(a, b, c, d, e, f, g, h, i, j):
    """One docstring line."""
    return (a, b,
            c)


class K:
    def method(self, x):
        return x
'''


def test_the_counter_leaves_out_blanks_comments_and_docstrings(tmp_path):
    app = tmp_path / "core"
    app.mkdir()
    (app / "m.py").write_text(SAMPLE + "\n\ndef long():\n" + "    x = 1\n" * 50, encoding="utf-8")
    (app / "migrations").mkdir()
    (app / "migrations" / "0001.py").write_text("x = 1\n" * 500, encoding="utf-8")  # migrations are not counted
    t = line_budget.totals(tmp_path)
    # code: import, def wide, return (2 lines), class K, def method, return x, def long, 50 assignments
    assert t["code_lines"] == 1 + 1 + 2 + 1 + 1 + 1 + 1 + 50
    assert t["lines"] == len(SAMPLE.splitlines()) + 2 + 1 + 50
    assert t["long_functions"] == ["core/m.py:20 long"]
    assert t["wide_functions"] == ["core/m.py:9 wide"]  # self is not a parameter a caller passes
    figs = line_budget.figures(t)
    assert line_budget.over_budget(figs, {"lines": 10**6, "code_lines": 57, "long_functions": 1,
                                          "wide_functions": 1}) == ["code_lines 58 > 57"]


def test_the_product_stays_within_its_line_budget():
    """Raising the budget is a reviewed commit to scripts/line_budget.py that names the feature that paid for it."""
    figs = line_budget.figures(line_budget.totals())
    assert line_budget.over_budget(figs) == [], figs
