"""Planning by simulation: how much of the N(N-1)/2 pairs, and how many judgements per pair, reach a
target rank correlation with the full design. Runs as the `annotation.plan` job."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors, stats
from annotation.analytics import project_job_manageable, project_job_visible
from annotation.forms import PlanningForm, form_errors
from annotation.models import Batch
from frontend import svg
from jobs.models import Job
from jobs.registry import job_kind
from jobs.services import job_create

SHARES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75)


@job_kind("annotation.plan", queue="cpu", description="Simulate annotation budgets for a project.",
          visible=project_job_visible, manageable=project_job_manageable)
def plan_job(job, *, project_id: int, n_items: int = 99, strengths_sd: float = 1.5, shares=SHARES,
             judgements_per_pair=(1, 2), n_annotators: int = 11, noise: float = 1.0, n_reps: int = 3,
             target: float = 0.95) -> dict:
    job.progress(0.05, "simulating designs")
    rows = stats.plan_budget(n_items=n_items, shares=tuple(shares), judgements_per_pair=tuple(judgements_per_pair),
                             strengths_sd=strengths_sd, n_annotators=n_annotators, annotator_noise=noise,
                             n_reps=n_reps)
    needed = {}
    for row in rows:
        key = f"{row['method']} × {row['judgements_per_pair']}"
        if row["rho_full"] >= target and key not in needed:
            needed[key] = {"share": row["share"], "n_judgements": row["n_judgements"]}
    return {"rows": rows, "needed": needed, "target": target, "n_items": n_items,
            "n_pairs": n_items * (n_items - 1) // 2}


@login_required
def planning(request, pk: int):
    project = selectors.project_get_for(pk=pk, user=request.user, access="results")
    last = Job.objects.filter(kind="annotation.plan", params__project_id=project.pk).order_by("-created").first()
    context = {"project": project, "job": last, "result": last.result if last and last.status == "succeeded" else None}
    first_batch = Batch.objects.filter(project=project).order_by("id").first()
    context["default_items"] = first_batch.n_candidates if first_batch else 99
    if context["result"]:
        series = {}
        for row in context["result"]["rows"]:
            series.setdefault(f"{row['method']}, {row['judgements_per_pair']}×/pair", []).append(
                (row["share"], row["rho_full"]))
        context["chart"] = svg.line_chart(series, title="Rank correlation with the full design vs share of pairs",
                                          xlabel="share of pairs judged", ylabel="Spearman ρ vs full design",
                                          ymin=0.5, ymax=1.0)
    return render(request, "annotation/planning.html", context)


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
