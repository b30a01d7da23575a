"""One click from an annotation batch to a gold similarity set (benchmarks depend on annotation,
never the other way round)."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from annotation import analytics, selectors
from annotation.models import Batch
from benchmarks.services import gold_set_create_from_rows
from benchmarks.services.gold import GoldImportError


def gold_rows_from_batch(batch: Batch) -> list[dict]:
    """The batch's candidates with a normalised score (wins / the batch's largest win count)."""
    data = analytics.load_project_data(batch.project, batch_ids=[batch.pk])
    return [
        {"reference_id": r["reference_id"], "candidate_id": r["candidate_id"], "reference_text": r["reference_text"],
         "candidate_text": r["candidate_text"], "score": r["normalized_score"]}
        for r in analytics.score_rows(data, n_boot=0) if r["normalized_score"] is not None
    ]


@login_required
@require_POST
def gold_set_from_batch(request, batch_id: int):
    batch = get_object_or_404(Batch.objects.select_related("project", "reference"), pk=batch_id)
    if not selectors.user_can_manage(project=batch.project, user=request.user):
        raise PermissionDenied("Only the project's leads can turn a batch into a gold set.")
    rows = gold_rows_from_batch(batch)
    name = request.POST.get("name") or f"{batch.project.name} · {batch.name}"
    if not rows:
        messages.error(request, "The batch has no judgements yet.")
        return redirect("annotation:dashboard", pk=batch.project_id)
    try:
        gold = gold_set_create_from_rows(name=name, rows=rows, owner=request.user, source_project=batch.project,
                                         source_description=f"annotation project {batch.project.name}, batch {batch.name}")
    except GoldImportError as exc:
        messages.error(request, f"No gold set created: {exc}")
        return redirect("annotation:dashboard", pk=batch.project_id)
    messages.success(request, f"Gold set {gold.name!r} created from {len(rows)} scored candidates.")
    return redirect("benchmarks:gold-set", pk=gold.pk)
