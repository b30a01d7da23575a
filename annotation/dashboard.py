"""The lead dashboard: last analytics result, charts, and the recompute button."""
from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.models import Project
from frontend import svg
from jobs.models import Job
from jobs.services import job_create


def _project(request, pk: int) -> Project:
    return selectors.project_get_for(pk=pk, user=request.user, access="results",
                                     denied="Only the project's leads and researchers can see the dashboard.")


def last_analytics(project: Project) -> tuple[Job | None, Job | None]:
    """(last succeeded analytics job, job in progress) for the project."""
    jobs = Job.objects.filter(kind="annotation.analytics", params__project_id=project.pk)
    done = jobs.filter(status=Job.Status.SUCCEEDED).order_by("-finished").first()
    running = jobs.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("-created").first()
    return done, running


def _batch_sections(report: dict, selected: str | None) -> tuple[list[dict], list[str], str | None]:
    """Charts and tables for one batch at a time (the selected one, else the first): a page with
    100 batches × 99 candidates stays small. Returns (sections, all batch names, shown name)."""
    by_batch: dict[str, list[dict]] = {}
    for row in report.get("scores", []):
        by_batch.setdefault(row["batch"], []).append(row)
    names = list(by_batch)
    judged = [name for name in names if any(r["comparisons"] for r in by_batch[name])]
    shown = selected if selected in by_batch else (judged or names or [None])[0]
    sections = []
    for name, rows in by_batch.items():
        if name != shown:
            continue
        ranked = sorted(rows, key=lambda r: (r["rank"] if r["rank"] is not None else 10**9))
        judged = [r for r in ranked if r["comparisons"] and r["rank"] is not None]
        chart = svg.interval_chart(
            [r["candidate_id"] for r in judged], [r["bt_strength"] for r in judged], [r["bt_low"] for r in judged],
            [r["bt_high"] for r in judged], title=f"Bradley–Terry strength with 95% credible interval, {name}",
            xlabel="Bradley–Terry strength (log scale, centred)",
            tooltips=[f"{r['candidate_id']}: {r['candidate_text']} — wins {r['wins']}/{r['comparisons']}" for r in judged],
        ) if judged else ""
        hist = svg.histogram([r["normalized_score"] for r in judged], title=f"Normalised score distribution, {name}",
                             xlabel="normalised similarity (wins / max wins)") if judged else ""
        sections.append({
            "name": name, "id": rows[0]["batch_id"], "reference_id": rows[0]["reference_id"], "reference_text": rows[0]["reference_text"],
            "rows": ranked, "top": judged[:5], "bottom": judged[-5:][::-1] if len(judged) > 5 else [],
            "chart": chart, "hist": hist, "n_judged": len(judged),
            "n_never": sum(1 for r in rows if not r["comparisons"]),
            "interval_note": next((r.get("interval_note") for r in judged if r.get("interval_note")), None),
            "has_aware": any(r.get("bt_aware_strength") is not None for r in judged),
        })
    return sections, names, shown


def _triads(report: dict, shown: str | None) -> tuple[list[dict], list[dict]]:
    """The shown batch's per-annotator triad rows (with the listed cycles), and per-annotator totals
    over all batches, so the page stays small with 100 batches × 11 annotators."""
    rows = report.get("triads", {}).get("per_annotator", [])
    totals: dict[str, dict] = {}
    for row in rows:
        total = totals.setdefault(row["annotator"], {"annotator": row["annotator"], "batches": 0, "n_circular": 0,
                                                     "n_complete_triples": 0, "expected_random": 0.0})
        total["batches"] += 1
        total["n_circular"] += row["n_circular"] or 0
        total["n_complete_triples"] += row["n_complete_triples"] or 0
        total["expected_random"] += row["expected_random"] or 0.0
    return [row for row in rows if row["batch"] == shown], sorted(totals.values(), key=lambda t: t["annotator"])


@login_required
def dashboard(request, pk: int):
    project = _project(request, pk)
    done, running = last_analytics(project)
    report = done.result if done else None
    context = {"project": project, "job": done, "running": running, "report": report,
               "progress": selectors.project_progress(project=project),
               "can_manage": selectors.user_can_manage(project=project, user=request.user)}
    if report:
        agreement = report["agreement"]
        pairwise = (agreement.get("symmetric") or {}).get("cohen_symmetric") or agreement.get("cohen")
        if pairwise:
            symmetric = "cohen_symmetric" in (agreement.get("symmetric") or {})
            context["heatmap"] = svg.heatmap(
                pairwise["kappa"], agreement["annotators"], counts=pairwise["n_shared"],
                title=("Pairwise agreement κ = 2·(share of pairs where both chose the same candidate) − 1, "
                       "per annotator pair" if symmetric else "Cohen's kappa between annotators (pairs judged by both)"))
            context["kappa_pairs"] = [
                {"a": a, "b": b, "kappa": pairwise["kappa"][i][k], "n": pairwise["n_shared"][i][k]}
                for i, a in enumerate(agreement["annotators"]) for k, b in enumerate(agreement["annotators"]) if k > i
            ]
        tl = report["timeline"]
        labels = [dt.datetime.fromtimestamp(t, tz=dt.timezone.utc) for t in tl["times"]]
        xs = [(t - tl["times"][0]) / 60 for t in tl["times"]] if tl["times"] else []
        series = ({"Kendall's u": list(zip(xs, tl["kendall_u"])),
                   "Fleiss κ (symmetric chance)": list(zip(xs, tl["fleiss_symmetric"]))}
                  if tl.get("kendall_u") is not None else
                  {"Fleiss κ": list(zip(xs, tl["fleiss"])), "Krippendorff α": list(zip(xs, tl["krippendorff"]))})
        context["agreement_chart"] = svg.line_chart(
            series, title="Agreement so far, recomputed at 12 moments between the first and the last judgement",
            xlabel="minutes since first judgement", ylabel="agreement", ymin=-0.2, ymax=1.0)
        context["progress_chart"] = svg.line_chart(
            {name: list(zip(xs, values)) for name, values in tl["progress"].items()},
            title="Judgements per annotator over time", xlabel="minutes since first judgement", ylabel="judgements")
        context["timeline_span"] = (labels[0], labels[-1]) if labels else None
        context["batches"], context["batch_names"], context["shown_batch"] = _batch_sections(
            report, request.GET.get("batch"))
        context["triads_shown"], context["triad_totals"] = _triads(report, context["shown_batch"])
        retest = agreement.get("retest") or []
        context["show_retest"] = any(r.get("n_repeated") for r in retest)
    return render(request, "annotation/dashboard.html", context)


@login_required
@require_POST
def recompute(request, pk: int):
    project = _project(request, pk)
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one recompute at a time
        _, running = last_analytics(project)
        if running is None:
            job_create(kind="annotation.analytics", params={"project_id": project.pk}, owner=request.user)
            messages.success(request, "Recomputation started; this page shows its progress.")
    return redirect("annotation:dashboard", pk=pk)
