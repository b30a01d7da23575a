from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Jobs"

    def ready(self) -> None:
        # The embedded filesystem broker needs its folders before anyone publishes or consumes.
        for key in ("data_folder_in", "data_folder_out", "control_folder"):
            folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(key)
            if folder:
                Path(folder).mkdir(parents=True, exist_ok=True)
        from jobs import (
            kinds,  # noqa: F401  (registers the built-in job kinds)
            signals,  # noqa: F401  (connects the worker signal handlers)
            tasks,  # noqa: F401  (the one task, which jobs.dispatch sends by name)
        )
