"""perf/ is one runner (`python -m perf`): it finds every benchmark script by its file, names each one's stored
figures, runs one by name and checks the ones that declare how (`PERF_CHECK`); the retired scripts' figures stay
with the command and the commit that made them."""
import runpy
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PERF = runpy.run_path(str(ROOT / "perf" / "__main__.py"), run_name="perf_runner")


def test_every_script_is_a_named_benchmark_with_its_stored_figures_and_check():
    names = PERF["benchmarks"]()
    on_disk = {p.stem for p in (ROOT / "perf").glob("*.py") if not p.name.startswith("_")}
    assert set(names) == on_disk and "suite_check" in names and "run_local_stop" in names
    assert all(PERF["summary"](path) for path in names.values())  # each says what it measures
    assert PERF["check_args"](names["suite_check"]) == [] and PERF["check_args"](names["run_local_stop"]) == ["--check"]
    assert PERF["check_args"](names["chaos"]) is None  # not re-checked by `make perf`
    stored = PERF["stored_figures"]("run_local_stop")
    assert [p.relative_to(ROOT).as_posix() for p in stored] == ["perf/expected/runner/run_local_stop.yaml"]
    assert yaml.safe_load(stored[0].read_text())["figures"]["max_stop_s"] <= 2.0
    assert "perf/expected/annotation/adaptive_design.yaml" in {
        p.relative_to(ROOT).as_posix() for p in PERF["stored_figures"]("adaptive_bench")}
    assert "python -m perf check" in (ROOT / "Makefile").read_text().replace("$(PY)", "python")


def test_the_command_lists_runs_by_name_and_refuses_an_unknown_one():
    listed = subprocess.run([sys.executable, "-m", "perf", "list"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")} == set(
        PERF["benchmarks"]())
    helped = subprocess.run([sys.executable, "-m", "perf", "run", "run_local_stop", "--help"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "--check" in helped.stdout
    unknown = subprocess.run([sys.executable, "-m", "perf", "run", "no_such_bench"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert unknown.returncode == 2 and "no benchmark 'no_such_bench'" in unknown.stderr


def test_retired_scripts_are_gone_with_their_figures_and_commit_kept():
    retired = yaml.safe_load((ROOT / "perf" / "expected" / "runner" / "retired.yaml").read_text())["retired"]
    assert {r["name"] for r in retired} == {"ltr_lightgbm_bench", "ltr_transfer_variants", "verse_tune"}
    for r in retired:
        assert not (ROOT / "perf" / f"{r['name']}.py").exists() and r["figures"] and r["docs"]
        assert f"perf/{r['name']}.py" in r["command"]
        if (ROOT / ".git").exists():  # the commit still holds the script: `git show COMMIT:perf/NAME.py`
            found = subprocess.run(["git", "cat-file", "-e", f"{r['commit']}:perf/{r['name']}.py"], cwd=ROOT,
                                   capture_output=True, timeout=60)
            assert found.returncode == 0, r
