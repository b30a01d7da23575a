"""Reads for the lead dashboard that must stay fast on a project of a million judgements.

`batch_progress` counts what `annotation.selectors.project_progress(per_annotator=False)` counts, with
the same figures, without joining every judgement to its pair: the live judgements of the project's
batches are counted on the index (batch, undone_at, pair) alone, and the few attention-check pairs
(reached through their own index) are counted apart and subtracted. The planned judgements are summed
on the index (batch, planned, taken) the same way.
"""
from __future__ import annotations

from django.db.models import Count, Sum

from annotation.models import Batch, Judgement, Membership, Pair, Project


def batch_progress(*, project: Project) -> dict:
    """{"batches": [{id, name, pilot, status, n_candidates, n_pairs, judgements, pairs_covered,
    pairs_progress, planned_judgements}], "n_annotators": N}: live judgements, attention checks left out.
    Five queries whatever the project's size."""
    batches = list(Batch.objects.filter(project=project).order_by("id").values(
        "id", "name", "pilot", "status", "n_candidates", "n_pairs"))
    ids = [b["id"] for b in batches]
    if not ids:
        return {"batches": [], "n_annotators": 0}

    def per_batch(judgements) -> dict[int, tuple[int, int]]:
        return {row[0]: (row[1], row[2]) for row in judgements.filter(undone_at__isnull=True).values("batch").annotate(
            n=Count("id"), covered=Count("pair", distinct=True)).order_by().values_list("batch", "n", "covered")}

    attention = Pair.objects.filter(attention_answer__project=project, attention_answer__isnull=False)
    live = per_batch(Judgement.objects.filter(batch_id__in=ids))
    checks = per_batch(Judgement.objects.filter(pair__in=attention.values("id")))
    planned = dict(Pair.objects.filter(batch_id__in=ids).values("batch").annotate(p=Sum("planned")).order_by()
                   .values_list("batch", "p"))
    for batch_id, p in attention.values("batch").annotate(p=Sum("planned")).order_by().values_list("batch", "p"):
        planned[batch_id] = planned.get(batch_id, 0) - p
    n_annotators = Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR).count()
    rows = []
    for batch in batches:
        n, covered = live.get(batch["id"], (0, 0))
        n_checks, covered_checks = checks.get(batch["id"], (0, 0))
        covered -= covered_checks
        rows.append(dict(
            batch, judgements=n - n_checks, pairs_covered=covered,
            pairs_progress=covered / batch["n_pairs"] if batch["n_pairs"] else 0.0,
            planned_judgements=batch["n_pairs"] * n_annotators if batch["pilot"] else planned.get(batch["id"]) or 0))
    return {"batches": rows, "n_annotators": n_annotators}
