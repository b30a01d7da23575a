"""Planning by simulation: the judgements each design (every pair, random pairs, adaptive pairs) needs for a target
rank correlation with the true strengths, and where a top-k stop rule would stop. The simulation runs as the
`annotation.plan` job (`annotation/jobs.py`)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.forms import PlanningForm, form_errors
from annotation.models import Batch
from frontend import svg
from jobs.models import Job
from jobs.services import job_create


@login_required
def planning(request, pk: int):
    project = selectors.project_get_for(pk=pk, user=request.user, access="results")
    last = Job.objects.filter(kind="annotation.plan", params__project_id=project.pk).order_by("-created").first()
    context = {"project": project, "job": last, "result": last.result if last and last.status == "succeeded" else None}
    first_batch = Batch.objects.filter(project=project).order_by("id").first()
    context["default_items"] = first_batch.n_candidates if first_batch else 99
    if context["result"] and context["result"].get("designs"):
        context["design_chart"] = design_chart(context["result"]["designs"])
    return render(request, "annotation/planning.html", context)


def design_chart(designs: dict) -> str:
    """Spearman ρ with the true strengths against judgements: random and adaptive (mean, ±1 SD band over seeds),
    the exhaustive design as a marked point."""
    series = {name: [(r["judgements"], r["rho"]) for r in designs[name]] for name in ("random", "adaptive")}
    styles = {"random": {"std": [r["sd"] for r in designs["random"]], "dash": True},
              "adaptive": {"std": [r["sd"] for r in designs["adaptive"]]}}
    ex = designs["exhaustive"]
    return svg.line_chart(series, title="Rank correlation with the true strengths against judgements",
                          xlabel="judgements in the batch", ylabel="Spearman ρ with the truth", ymin=0.5, ymax=1.0,
                          styles=styles, marks=[(ex["judgements"], ex["rho"], f"exhaustive ρ {ex['rho']:.3f}")])


@login_required
@require_POST
def planning_run(request, pk: int):
    project = selectors.project_get_for(pk=pk, user=request.user, access="results")
    form = PlanningForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Invalid value — {form_errors(form)}")
        return redirect("annotation:planning", pk=pk)
    job_create(kind="annotation.plan", params={"project_id": project.pk, **form.cleaned_data}, owner=request.user)
    return redirect("annotation:planning", pk=pk)
