"""Code-health guards that run with the suite (so CI enforces them): ruff (pyflakes, syntax, import order;
ruff.toml) and the import contracts (.importlinter: the pure packages never import Django; annotation and
detection never import benchmarks). Fix import order with `.venv/bin/python -m ruff check --fix .`."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(args):
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_finds_nothing():
    proc = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "."])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_import_contracts_are_kept():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    proc = _run([lint_imports, "--no-cache"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " 0 broken" in proc.stdout


def test_models_and_migrations_agree():
    """`makemigrations --check`: every model change has its migration."""
    proc = _run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"])
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# Generic role names that once sat in several packages (issue 11); each now exists once at most, so a module's
# name says what it holds (`detection/latin/latin_commands.py`, `benchmarks/loci/loci_commands.py`,
# `benchmarks/greek_sts/sts_commands.py`, `benchmarks/loci/method_adapters.py`; `core/cli.py` is the convention).
_ONCE_ONLY = ("cli.py", "methods.py", "corpus.py", "runs.py")


def test_generic_module_names_are_not_repeated_across_packages():
    tracked = _run(["git", "ls-files", "*.py"]).stdout.split()
    found = {name: [p for p in tracked if Path(p).name == name and not p.startswith("tests/")] for name in _ONCE_ONLY}
    repeated = {name: paths for name, paths in found.items() if len(paths) > 1}
    assert not repeated, repeated
    assert found["cli.py"] == ["core/cli.py"]
