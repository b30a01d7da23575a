"""The figures the docs quote come from the stored expected results: ``docs/results/benchmark_suite.yaml`` is what
``perf/suite_check.py --write-results`` makes of ``perf/expected/*.yaml`` now, and every figure of the two tables of
``docs/benchmark_suite.md`` (leave one benchmark out; within each benchmark) is the stored figure rounded."""
import re
from pathlib import Path

import yaml

from benchmarks.suite import expected as E

ROOT = Path(__file__).resolve().parents[3]
EXPECTED = sorted((ROOT / "perf" / "expected").glob("*.yaml"))
RESULTS = ROOT / "docs" / "results" / "benchmark_suite.yaml"

# how the page names a benchmark and a method -> the suite's names (the row labels are prose)
BENCHMARKS = {"Lucan → Virgil": "lucan-vergil", "Loci Similes": "loci-similes"}
METHODS = {"bm25-lemma": "bm25-lemma", "rrf: bm25-lemma + tesserae": "rrf:bm25-lemma+tesserae",
           "bm25-lemma > feature-logreg": "bm25-lemma>feature-logreg",
           "bm25-lemma > feature-ltr": "bm25-lemma>feature-ltr(query_norm=true)",
           "feature-ltr, leave-one-benchmark-out": "bm25-lemma>feature-ltr(query_norm=true)@lobo",
           # the channels rows (perf/expected/suite_channels.yaml) are named by their method strings
           **{m: m for m in ("channels", "channels>feature-ltr@lobo",
                             "channels>feature-ltr(anchor=true,C=0.01)@lobo",
                             "channels>feature-ltr(anchor=true,C=0.0001)@lobo",
                             "channels>feature-ltr(anchor=true,C=0.01)", "channels>feature-ltr(anchor=true,C=0.0001)",
                             "channels>feature-ltr(anchor=true,C=0.001)@lobo",
                             "channels>feature-ltr(anchor=true,C=0.001)")}}
# the clean leave-one-benchmark-out rows (perf/expected/suite_clean_lobo.yaml), named by their method strings with
# that file's untuned fusion written "U"
_CLEAN = yaml.safe_load((ROOT / "perf" / "expected" / "suite_clean_lobo.yaml").read_text(encoding="utf-8"))
_U = next(m for m in _CLEAN["suite"]["methods"] if m.startswith("channels(profile=prose,candidates=fused"))
METHODS.update({m.replace(_U, "U"): m for m in _CLEAN["suite"]["methods"] if m not in METHODS})
TABLES = {  # header cells -> the stored figure each numeric column is
    "R@10 | MRR@10 | Δ R@10": ("R@10", "RR@10"),
    "R@1 | R@10 | R@100 | MRR@10 | nDCG@10 | fold sd": ("R@1", "R@10", "R@100", "RR@10", "nDCG@10", None,
                                                        "global@1000"),
}


def _label(cell: str, names: dict) -> str | None:
    cell = cell.replace("*", "").strip()
    return next((v for k, v in names.items() if cell == k or cell.startswith((k + " (", k + ","))), None)


def quoted(markdown: str):
    """(line, benchmark, method, figure, quoted value) of every figure in the page's two result tables."""
    out, columns, bench = [], None, None
    for n, line in enumerate(markdown.splitlines(), 1):
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        head = " | ".join(cells)
        found = next((cols for key, cols in TABLES.items() if key in head), None)
        if found:
            columns, bench = found, None
            continue
        if columns is None or set(line) <= set("|-"):
            continue
        bench = _label(cells[0], BENCHMARKS) or bench
        method = _label(cells[1], METHODS)
        assert method, f"docs/benchmark_suite.md line {n}: method {cells[1]!r} has no stored counterpart"
        for fig, cell in zip(columns, cells[2:]):
            if fig is not None:
                out.append((n, bench, method, fig, float(cell.replace("*", ""))))
    return out


def test_the_results_data_is_what_the_expected_files_hold_now():
    assert RESULTS.read_text(encoding="utf-8") == E.render_results(E.results_data(EXPECTED)), (
        "regenerate: .venv/bin/python perf/suite_check.py --write-results docs/results/benchmark_suite.yaml")


def test_every_figure_of_the_suite_page_tables_is_a_stored_figure():
    stored = yaml.safe_load(RESULTS.read_text(encoding="utf-8"))["figures"]
    rows = quoted((ROOT / "docs" / "benchmark_suite.md").read_text(encoding="utf-8"))
    assert len(rows) >= 2 * 3 * 2 + 2 * 4 * 6  # both tables, every row, every numeric column
    wrong = [f"line {n}: {b} / {m} / {f}: quoted {q}, stored {stored[b][m][f]}"
             for n, b, m, f, q in rows if not E.quote_matches(q, stored[b][m][f])]
    assert not wrong, "\n".join(wrong)


def test_a_figure_that_moved_is_caught():
    stored = yaml.safe_load(RESULTS.read_text(encoding="utf-8"))["figures"]
    page = (ROOT / "docs" / "benchmark_suite.md").read_text(encoding="utf-8")
    n, b, m, f, q = quoted(page)[0]
    moved = re.sub(rf"\b{q:.3f}\b", f"{q + 0.002:.3f}", page, count=1)
    n2, b2, m2, f2, q2 = quoted(moved)[0]
    assert (n2, b2, m2, f2) == (n, b, m, f) and not E.quote_matches(q2, stored[b][m][f])
