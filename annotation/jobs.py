"""Job kinds of the annotation app."""
from annotation import analytics, planning  # noqa: F401  (each registers its kind)
