"""The annotator's page: one batch's pairs, judged in the browser through the annotation API."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, render

from annotation import selectors
from annotation.models import Batch, Judgement


@login_required
def annotate(request, batch_id: int):
    batch = get_object_or_404(Batch.objects.select_related("project", "reference"), pk=batch_id)
    if not selectors.user_can_annotate(project=batch.project, user=request.user):
        raise PermissionDenied("You are not an annotator of this project.")
    first_time = not Judgement.objects.filter(batch__project=batch.project, annotator=request.user).exists()
    return render(request, "annotation/annotate.html", {"batch": batch, "project": batch.project,
                                                        "first_time": first_time})
