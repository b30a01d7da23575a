"""Settings for the gunicorn servers of the annotation benchmarks: the test settings of the tree being served
(it comes first on PYTHONPATH) with persistent database connections as in production
(`config/settings/production.py`: DJANGO_CONN_MAX_AGE, default 60 s). SIMILIA_PERF_CONN_MAX_AGE=0 opens a
connection per request, as the plain test settings do."""
import os

from config.settings.test import *  # noqa: F403
from config.settings.test import DATABASES

DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("SIMILIA_PERF_CONN_MAX_AGE", "60"))
# perf/chaos.py: a database outage of a few seconds must not pass for a lost worker (the test settings' 4 s).
JOB_HEARTBEAT_TIMEOUT = int(os.environ.get("SIMILIA_PERF_HEARTBEAT_TIMEOUT", "4"))
