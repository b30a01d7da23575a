"""``manage.py train_model``: one command trains a learning-to-rank reranker on a stored benchmark with its
progress on the terminal, stores it (JSON, a model card naming the first stage) and refuses bad requests."""
import json

import pytest
from django.core.management import CommandError, call_command

from detection.models import TrainedModel


@pytest.mark.django_db
def test_train_model_trains_stores_and_prints_progress(loci_version, models_dir, capsys):
    call_command("train_model", "--benchmark", loci_version.benchmark.name, "--name", "ltr-cmd", "--k", "10")
    out = capsys.readouterr()
    assert "model ltr-cmd stored: ltr-cmd/fold-0" in out.out and "ltr-cmd/all" in out.out
    assert "training feature-ltr 'ltr-cmd'" in out.err and "%]" in out.err  # the job's progress, on the terminal
    rows = {m.name: m for m in TrainedModel.objects.all()}
    assert rows["ltr-cmd/all"].method == "feature-ltr" and len(rows) == 6
    card = json.loads((models_dir / "ltr-cmd" / "all" / "reranker.json").read_text())
    assert card["reranker"] == "feature-ltr" and card["first_stage"] == "channels"  # the detector's default first stage
    assert json.loads((models_dir / "ltr-cmd" / "all" / "classifier.json").read_text())["kind"] == "feature-ltr"
    assert not list(models_dir.rglob("*.pkl")) and not list(models_dir.rglob("*.skops"))


@pytest.mark.django_db
def test_train_model_refuses_what_the_api_refuses(loci_version, models_dir):
    with pytest.raises(CommandError, match="feature classifier's method is one of"):
        call_command("train_model", "--benchmark", loci_version.benchmark.name, "--name", "x", "--method", "bm25")
    with pytest.raises(CommandError, match="k must be between 1 and 1000"):
        call_command("train_model", "--benchmark", loci_version.benchmark.name, "--name", "x", "--k", "0")
    with pytest.raises(CommandError, match="no benchmark 'nope'"):
        call_command("train_model", "--benchmark", "nope", "--name", "x")
    assert not TrainedModel.objects.exists()
