"""The short stored expected results re-run in the test suite and hold; a changed figure is reported as drift."""
import copy
from pathlib import Path

import pytest

from benchmarks.suite import expected as E
from benchmarks.suite.suite_commands import run_suite_command
from core.paths import shared_data_dir

SHORT = Path(__file__).resolve().parents[3] / "perf" / "expected" / "suite_short.yaml"
needs_data = pytest.mark.skipif(not (shared_data_dir() / "locisimiles").is_dir(), reason="shared data folder not here")


@needs_data
def test_short_expected_results_hold_and_drift_is_caught():
    spec = E.load(SHORT)
    report = E.run_expected(spec)
    assert E.drift(spec, report) == []
    moved = copy.deepcopy(spec)
    moved["figures"]["loci-similes"]["bm25-lemma"]["RR@10"] += 0.01
    problems = E.drift(moved, report)
    assert len(problems) == 1 and problems[0].startswith("loci-similes / bm25-lemma / RR@10: expected")
    del moved["figures"]["loci-similes"]["bm25-lemma"]
    moved["figures"]["loci-similes"]["no-such-method"] = {"RR@10": 0.5}
    assert E.drift(moved, report) == ["loci-similes / no-such-method / RR@10: expected 0.5, not measured"]


def test_unknown_methods_and_benchmarks_are_refused_before_anything_runs():
    from core.cli import CommandInputError

    with pytest.raises(CommandInputError, match="method 'bm25-lemma>bm25-lemma'"):
        run_suite_command(methods=["bm25-lemma>bm25-lemma"])
    with pytest.raises(CommandInputError, match="method 'nope'"):
        run_suite_command(methods=["nope"])
    with pytest.raises(CommandInputError, match="unknown benchmark 'x'"):
        run_suite_command(methods=["bm25-lemma"], benchmarks=["x"])


def test_manage_py_evaluate_suite_refuses_a_bad_method_cleanly():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="method 'bm25-lemma>tesserae'"):
        call_command("evaluate", "--suite", "--methods", "bm25-lemma>tesserae")


@needs_data
def test_manage_py_evaluate_suite_checks_the_short_expected_file(capsys):
    from django.core.management import call_command

    call_command("evaluate", "--suite", "--expected", str(SHORT))
    assert "suite_short: all figures hold" in capsys.readouterr().out
