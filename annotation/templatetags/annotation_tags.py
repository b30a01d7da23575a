from django import template
from django.db.models import Count

from annotation import selectors
from annotation.models import Judgement

register = template.Library()


@register.inclusion_tag("annotation/_annotator_batches.html", takes_context=True)
def annotator_batches(context):
    user = context["request"].user
    mine = dict(
        Judgement.objects.filter(annotator=user, undone_at__isnull=True)
        .values("batch").annotate(n=Count("id")).values_list("batch", "n")
    )
    rows = []
    for project in selectors.projects_to_annotate(user=user).prefetch_related("batches__reference"):
        for batch in project.batches.all():
            rows.append({"project": project, "batch": batch, "mine": mine.get(batch.pk, 0)})
    batches = [row["batch"] for row in rows]
    work = selectors.batches_with_work_for(user=user, batches=batches)
    left = selectors.work_left_for(user=user, batches=batches)
    for row in rows:
        row["has_work"] = row["batch"].pk in work
        row["left"] = left[row["batch"].pk]
    return {"rows": rows}


@register.inclusion_tag("annotation/_lead_projects.html", takes_context=True)
def lead_projects(context):
    user = context["request"].user
    return {"projects": selectors.projects_managed_by(user=user)}
