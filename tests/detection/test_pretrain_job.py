"""The pretrain_encoder job (gpu queue: progress, a run its worker left behind resumed from its checkpoint, bad
requests) and the command's checks, on three real files of The Latin Library."""
import shutil

import pytest
from django.core.management import CommandError, call_command

from detection.methods.infrastructure import model_store
from detection.methods.semantic import pretrain
from jobs.models import Job
from jobs.runner import run_job

TINY = {"corpus": "latin_library", "size": "tiny", "max_lines": 100, "steps": 12, "checkpoint_every": 4}


@pytest.fixture
def dirs(tmp_path, settings, monkeypatch, latin_library_slice, torch_one_thread):
    settings.MODELS_DIR = tmp_path / "models"
    monkeypatch.setenv("SIMILIA_CORPORA_DIR", str(tmp_path / "corpora"))
    shutil.copytree(latin_library_slice, tmp_path / "corpora" / "latin_library")
    with model_store.using(settings.MODELS_DIR):
        yield tmp_path


@pytest.mark.django_db
def test_job_resumes_the_run_a_lost_worker_left_and_reports_progress(dirs):
    """A worker that died after step 4 left its checkpoint; the job sent again finishes the run from there."""
    assert pretrain.pretrain(pretrain.PretrainConfig(**TINY), "la-job", models_dir=dirs / "models",
                             stop_after=4) == {"stopped_at": 4}
    job = Job.objects.create(kind="pretrain_encoder", params={"name": "la-job", "config": TINY})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.progress == 1.0 and "resuming from the checkpoint of step 4/12" in job.log
    assert job.result["model"] == "la-job" and job.result["steps"] == 12 and job.result["size"] == "tiny"
    assert job.result["corpus"]["name"] == "latin_library" and job.result["versions"]["transformers"]
    assert model_store.local_path("la-job") is not None


@pytest.mark.django_db
@pytest.mark.parametrize("config, message", [
    ({**TINY, "corpus": "/work/shared/data/latin_library"}, "not a path"),
    ({**TINY, "corpus": "perseus"}, "no corpus named 'perseus'"),
    ({**TINY, "size": "large"}, "size must be one of tiny, small, base"),
    ({**TINY, "epochs": 3}, "unknown pretraining option"),
])
def test_job_refuses_bad_requests_naming_them(dirs, config, message):
    job = Job.objects.create(kind="pretrain_encoder", params={"name": "x", "config": config})
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert message in job.error and not (dirs / "models" / "x").exists()


@pytest.mark.django_db
def test_command_queues_on_the_gpu_queue_and_refuses_bad_input(dirs, capsys):
    call_command("pretrain_encoder", "--corpus", "latin_library", "--name", "la-q", "--size", "tiny", "--job")
    job = Job.objects.get(kind="pretrain_encoder")
    assert job.queue == "gpu" and job.params["config"]["size"] == "tiny" and "gpu queue" in capsys.readouterr().out
    with pytest.raises(CommandError, match="size must be one of tiny, small, base, not 'xl'"):
        call_command("pretrain_encoder", "--corpus", "latin_library", "--name", "q", "--size", "xl")
    with pytest.raises(CommandError, match="stored corpus, not a path"):
        call_command("pretrain_encoder", "--corpus", str(dirs / "corpora" / "latin_library"), "--name", "q")
    with pytest.raises(CommandError, match="no corpus named 'grc'"):
        call_command("pretrain_encoder", "--corpus", "grc", "--name", "q", "--language", "grc")
    assert Job.objects.count() == 1
