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
