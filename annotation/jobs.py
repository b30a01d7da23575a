"""Job kinds of the annotation app."""
from annotation import analytics, batch_job, planning  # noqa: F401  (each registers its kind)
