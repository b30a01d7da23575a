"""Command line: python -m benchmarks.greek_sts.sts_commands and the manage.py wrappers (no database)."""
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.greek_sts.sts_commands import main

ROOT = Path(__file__).resolve().parents[3]


def test_evaluate_cli_writes_report(sts_file, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    rc = main(["evaluate", "--gold", str(sts_file), "--method", "char_ngram", "--output", str(tmp_path / "r.json"),
               "--calibration", "linear", "--plot", str(tmp_path / "s.svg"), "--quiet"], out, err)
    assert rc == 0, err.getvalue()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {"rmse", "spearman", "pearson", "per_reference", "directionality", "predictions"} <= set(report)
    assert report["n_pairs"] == 296 and len(report["per_reference"]) == 3
    assert (tmp_path / "s.svg").read_text(encoding="utf-8").startswith("<svg")


def test_sweep_cli_and_list(verses_file, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    rc = main(["sweep", "--verses", str(verses_file), "--level", "type", "--method", "levenshtein",
               "--output", str(tmp_path / "s.csv"), "--report-json", str(tmp_path / "s.json"),
               "--plot", str(tmp_path / "p.svg"), "--corpus", str(verses_file), "--quiet"], out, err)
    assert rc == 0, err.getvalue()
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "threshold,precision,recall,f1" and len(lines) == 20
    assert json.loads((tmp_path / "s.json").read_text())["n_items"] == 496
    out = io.StringIO()
    assert main(["sweep", "--method", "list"], out, err) == 0
    assert "semantic_edit" in out.getvalue() and "sentence_transformer" in out.getvalue()
    err = io.StringIO()
    assert main(["evaluate", "--gold", str(tmp_path / "missing.tsv"), "--method", "levenshtein"], out, err) == 2
    assert "missing.tsv" in err.getvalue()


def test_module_runs_without_django(sts_file):
    code = ("import sys, runpy\nsys.argv = ['cli', 'evaluate', '--method', 'list']\n"
            "try:\n    runpy.run_module('benchmarks.greek_sts.sts_commands', run_name='__main__')\n"
            "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
            "assert 'django' not in sys.modules, 'django imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "levenshtein" in proc.stdout


def test_management_commands_without_database(sts_file, tmp_path):
    pytest.importorskip("django")
    from django.core.management import call_command

    out = io.StringIO()
    call_command("evaluate_similarity", gold=str(sts_file), method="levenshtein", output=str(tmp_path / "r.json"),
                 quiet=True, stdout=out)
    assert json.loads((tmp_path / "r.json").read_text())["n_pairs"] == 296
    out = io.StringIO()
    call_command("pilot_sweep", method="list", stdout=out)
    assert "semantic_edit" in out.getvalue()
