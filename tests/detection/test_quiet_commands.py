"""Commands print what a person needs, not the libraries' INFO logs: `train_embeddings` run as a person runs it
(`manage.py`, the default settings, a real process) says its progress per epoch and the model it stored, and
none of the ~25 lines per model gensim logs at INFO (config/settings/base.py, LOGGING, `SIMILIA_LIBRARY_LOG_LEVEL`)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINES = ["arma uirumque cano troiae qui primus ab oris", "italiam fato profugus lauiniaque uenit litora"] * 10


def _train(tmp_path, **env):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "a.txt").write_text("\n".join(LINES), encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "SIMILIA_", "DATABASE_URL"))}
    clean.update(SIMILIA_VAR_DIR=str(tmp_path / "var"), OMP_NUM_THREADS="1", **env)
    return subprocess.run([sys.executable, "manage.py", "train_embeddings", "--corpus", str(corpus), "--name", "quiet",
                           "--dim", "8", "--epochs", "2", "--min-count", "1", "--workers", "1", "--unit", "surface"],
                          cwd=ROOT, env=clean, capture_output=True, text=True, timeout=240)


def test_train_embeddings_prints_progress_and_no_library_log_lines(tmp_path):
    proc = _train(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("quiet: ") and "units × 8" in proc.stdout
    err = proc.stderr.splitlines()
    assert any("%" in line and " s]" in line for line in err), proc.stderr  # "[    0.1 s]  50.0% epoch …"
    assert not [line for line in err if "gensim" in line], proc.stderr[-3000:]
    assert len(err) <= 20, proc.stderr


def test_the_library_log_level_is_a_setting(tmp_path):
    proc = _train(tmp_path, SIMILIA_LIBRARY_LOG_LEVEL="INFO")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any("gensim" in line for line in proc.stderr.splitlines())
