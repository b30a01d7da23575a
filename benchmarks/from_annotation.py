"""One click from an annotation batch to a gold similarity set (benchmarks depend on annotation,
never the other way round)."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from annotation import analytics, selectors
from annotation.models import Batch
from benchmarks.services import gold_set_create_from_rows
from benchmarks.services.gold import GoldImportError


def gold_rows_from_batch(batch: Batch) -> list[dict]:
    """The batch's candidates with a normalised score (wins / the batch's largest win count): counts only, so no exact
    posterior draws in this request even for an adaptive batch."""
    data = analytics.load_project_data(batch.project, batch_ids=[batch.pk])
    return [
        {"reference_id": r["reference_id"], "candidate_id": r["candidate_id"], "reference_text": r["reference_text"],
         "candidate_text": r["candidate_text"], "score": r["normalized_score"]}
        for r in analytics.score_rows(data, n_boot=0, exact=False) if r["normalized_score"] is not None
    ]


@login_required
@require_POST
def gold_set_from_batch(request, batch_id: int):
    # Only the project's leads; to anyone else the batch is missing (a 403 told them it exists).
    batch = selectors.managed_or_missing(Batch.objects.select_related("project", "reference"), pk=batch_id,
                                         user=request.user)
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
