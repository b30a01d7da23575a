"""Docker does not run here: validate the compose file and images statically."""
import re
import shutil
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load((DOCKER / "docker-compose.yml").read_text())


def test_services_and_volumes(compose):
    services = compose["services"]
    assert {"postgres", "redis", "web", "worker-cpu", "worker-interactive", "worker-gpu"} <= set(services)
    assert {"postgres-data", "redis-data", "similia-var"} <= set(compose["volumes"])
    for name, service in services.items():
        assert "healthcheck" in service, f"{name} has no health check"
        for volume in service.get("volumes", []):
            assert volume.split(":")[0] in compose["volumes"], f"{name}: {volume} is not a named volume"


def test_gpu_worker_reserves_an_nvidia_device_and_listens_on_gpu_queue(compose):
    gpu = compose["services"]["worker-gpu"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]
    assert gpu["command"][gpu["command"].index("-Q") + 1] == "gpu"
    for lane, queue in (("cpu", "cpu"), ("interactive", "interactive")):  # the interactive lane's slot of its own
        command = compose["services"][f"worker-{lane}"]["command"]
        assert command[command.index("-Q") + 1] == queue
    assert gpu["build"]["dockerfile"] == "docker/Dockerfile.gpu"


def test_app_services_wait_for_healthy_database_and_broker(compose):
    for name in ("web", "worker-cpu", "worker-interactive", "worker-gpu"):
        depends = compose["services"][name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_every_command_exists_in_the_image(compose):
    """gunicorn and celery are installed by requirements.txt; their targets import."""
    requirements = (ROOT / "requirements.txt").read_text()
    for name in ("web", "worker-cpu", "worker-interactive", "worker-gpu"):
        command = compose["services"][name]["command"]
        assert re.search(rf"^{command[0]}==", requirements, re.M), f"{command[0]} not pinned"
        assert shutil.which(command[0], path=str(Path(__import__('sys').executable).parent)), command[0]
    web = compose["services"]["web"]["command"]
    module, attr = web[1].split(":")
    assert (ROOT / (module.replace(".", "/") + ".py")).exists()
    import importlib

    assert hasattr(importlib.import_module(module), attr)
    assert importlib.import_module("config.celery").app.main == "similia"


def test_environment_matches_settings(compose):
    """Every variable the stack sets is read by the settings, and production's required ones are set."""
    settings_text = "".join(p.read_text() for p in (ROOT / "config").rglob("*.py"))
    read = set(re.findall(r'env_\w+\("([A-Z_]+)"', settings_text))
    env = compose["x-app"]["environment"]
    # the hub libraries read their offline switches themselves (detection.methods.infrastructure.model_store reads them too)
    allowed_outside_settings = {"DJANGO_SETTINGS_MODULE", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}
    for key in env:
        assert key in read or key in allowed_outside_settings, f"{key} is not read by config/settings"
    for required in ("DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL"):
        assert required in env
    assert compose["services"]["web"]["environment"]["SIMILIA_MIGRATE"] == "1"


def test_dockerfiles_use_the_entrypoint_and_pinned_requirements():
    for name in ("Dockerfile", "Dockerfile.gpu"):
        text = (DOCKER / name).read_text()
        assert "pip install -r requirements.txt" in text
        assert 'ENTRYPOINT ["/app/docker/entrypoint.sh"]' in text
        assert "python:3.11" in text
    entry = (DOCKER / "entrypoint.sh").read_text()
    assert "psycopg.connect" in entry and 'exec "$@"' in entry
    assert (DOCKER / "entrypoint.sh").stat().st_mode & 0o111


def test_cpu_workers_scale_with_compose(compose):
    """`docker compose up --scale worker-cpu=N` needs replicas without a fixed name or host port, each with
    its own worker name (`%h` is the container's hostname) and the shared broker and database."""
    cpu = compose["services"]["worker-cpu"]
    assert "container_name" not in cpu and "ports" not in cpu
    command = cpu["command"]
    assert command[command.index("-n") + 1].endswith("@%h")
    env = {**compose["x-app"]["environment"], **cpu.get("environment", {})}
    assert env["CELERY_BROKER_URL"].startswith("redis://${SIMILIA_REDIS_HOST:-redis}:6379")
    assert env["DATABASE_URL"].endswith("@${SIMILIA_DB_HOST:-postgres}:5432/similia")


def test_compose_backs_the_database_up_nightly_and_keeps_14(compose):
    backup = compose["services"]["backup"]
    script = backup["command"][-1]
    assert backup["command"][:2] == ["sh", "-c"] and "python manage.py backup" in script
    assert "sleep 86400" in script and "tail -n +15" in script
    assert backup["environment"]["DATABASE_URL"] == compose["x-app"]["environment"]["DATABASE_URL"]
    assert "postgresql-client" in (ROOT / "docker" / "Dockerfile").read_text()  # pg_dump in the image
