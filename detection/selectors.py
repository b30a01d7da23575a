"""Reads of the detection app: the trained-model registry."""
from __future__ import annotations

from django.db.models import QuerySet

from detection.models import TrainedModel


def trained_model_list(*, kind: str | None = None) -> QuerySet[TrainedModel]:
    qs = TrainedModel.objects.select_related("training_job", "owner")
    return qs.filter(kind=kind) if kind else qs
