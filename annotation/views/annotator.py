"""The annotator's page: one batch's pairs, judged in the browser through the annotation API."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render

from annotation import selectors
from annotation.models import Batch, Judgement, StudyProgress
from annotation.services.study import pending_step, study_on


@login_required
def annotate(request, batch_id: int):
    batch = get_object_or_404(Batch.objects.select_related("project", "reference"), pk=batch_id)
    if not selectors.user_can_annotate(project=batch.project, user=request.user):
        raise PermissionDenied("You are not an annotator of this project.")
    if study_on(batch.project) and pending_step(batch.project, StudyProgress.objects.filter(
            project=batch.project, user=request.user).first()):
        return redirect("annotation:study", batch_id=batch.pk)  # consent, training, check first
    first_time = not Judgement.objects.filter(batch__project=batch.project, annotator=request.user).exists()
    return render(request, "annotation/annotate.html", {"batch": batch, "project": batch.project,
                                                        "first_time": first_time})
