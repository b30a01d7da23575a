"""The lead dashboard: last analytics result, charts, and the recompute button."""
from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import analytics, selectors
from annotation.dashboard_selectors import batch_progress
from annotation.models import AnalyticsBatchResult, Batch, Judgement, Project
from annotation.modes import mode_for
from annotation.services.adaptive_batches import stop_rule, stored_stop_status
from annotation.services.study import STUDY_COLUMNS, study_on, study_rows
from core.csv_export import SPREADSHEET, csv_text
from frontend import svg
from jobs.models import Job


def _project(request, pk: int) -> Project:
    return selectors.project_get_for(pk=pk, user=request.user, access="results",
                                     denied="Only the project's leads and researchers can see the dashboard.")


def last_analytics(project: Project) -> tuple[Job | None, Job | None]:
    """(last succeeded analytics job, job in progress) for the project."""
    jobs = Job.objects.filter(kind=analytics.ANALYTICS_JOB, params__project_id=project.pk).defer("log")
    done = jobs.filter(status=Job.Status.SUCCEEDED).order_by("-finished").first()
    return done, analytics.analytics_in_progress(project)


def _first_view_computes(project: Project) -> bool:
    """Whether a dashboard view with nothing stored queues the analytics job itself: the project has live judgements
    and no analytics job of it failed (a failing one is not retried on every view; the lead's button does)."""
    jobs = Job.objects.filter(kind=analytics.ANALYTICS_JOB, params__project_id=project.pk)
    return (Judgement.objects.filter(batch__project=project, undone_at__isnull=True).exists()
            and not jobs.filter(status=Job.Status.FAILED).exists())


def _section(rows: list[dict]) -> dict:
    """Charts and tables of one batch (the page shows one batch at a time: 100 batches × 99
    candidates stay out of it)."""
    name = rows[0]["batch"]
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
    return {
        "name": name, "id": rows[0]["batch_id"], "reference_id": rows[0]["reference_id"],
        "reference_text": rows[0]["reference_text"], "rows": ranked, "top": judged[:5],
        "bottom": judged[-5:][::-1] if len(judged) > 5 else [], "chart": chart, "hist": hist, "n_judged": len(judged),
        "n_never": sum(1 for r in rows if not r["comparisons"]),
        "interval_note": next((r.get("interval_note") for r in judged if r.get("interval_note")), None),
        # the convergence check failed, or the Laplace fallback gave the intervals: a warning, not a note
        "posterior_warning": next((r.get("interval_note") for r in judged
                                   if r.get("posterior") in ("exact, not converged", "laplace fallback")), None),
        "has_aware": any(r.get("bt_aware_strength") is not None for r in judged),
    }


def _shown_batch(summary: dict, selected: str | None) -> dict | None:
    """The batch to show: the selected one, else the first with judgements, else the first."""
    index = summary.get("batches", [])
    by_name = {b["name"]: b for b in index}
    if selected in by_name:
        return by_name[selected]
    return next((b for b in index if b["n_judged"]), index[0] if index else None)


def _legacy_parts(report: dict) -> tuple[dict, dict[int, dict]]:
    """A report stored whole (before results were stored per batch) as (summary, pieces by batch id)."""
    pieces: dict[int, dict] = {}
    for row in report.get("scores", []):
        pieces.setdefault(row["batch_id"], {"scores": [], "triads": [], "details": {}})["scores"].append(row)
    names = {piece["scores"][0]["batch"]: batch_id for batch_id, piece in pieces.items()}
    for row in report.get("triads", {}).get("per_annotator", []):
        if row["batch"] in names:
            pieces[names[row["batch"]]]["triads"].append(row)
    index = [{"id": batch_id, "name": piece["scores"][0]["batch"], "reference_id": piece["scores"][0]["reference_id"],
              "n_rows": len(piece["scores"]), "n_judged": sum(1 for r in piece["scores"] if r["comparisons"])}
             for batch_id, piece in pieces.items()]
    summary = dict(report, batches=index, triad_totals=analytics._triad_totals(report.get("triads", {}).get(
        "per_annotator", [])), majority_triads=report.get("triads", {}).get("majority", []),
        n_directionality=len(report.get("directionality", [])))
    return summary, pieces


def _stored_piece(job: Job, batch_id: int) -> dict | None:
    return AnalyticsBatchResult.objects.filter(job=job, batch_id=batch_id).values("scores", "triads", "details").first()


def adaptive_stop_rows(project: Project, limit: int = 100) -> list[dict]:
    """Per batch of an adaptive project (first `limit` by id): how close it is to the lead's stop rule. Live counts and
    the quick Laplace figures; the exact figures are the latest stored `annotation.stop_check` result, with the check
    in progress (queued here when the stored one is stale): the page makes no posterior draws."""
    rows = []
    for batch in Batch.objects.filter(project=project).order_by("pk")[:limit]:
        status = stored_stop_status(project, batch)
        behind = status["judgements"] - status["exact_at"] if status["exact_finished"] is not None else None
        rows.append(dict(status, batch=batch.name, open=batch.status == Batch.Status.OPEN, exact_behind=behind,
                         budget_share=status["judgements"] / project.stop_budget if project.stop_budget else None))
    return rows


@login_required
def dashboard(request, pk: int):
    return render(request, "annotation/dashboard.html", dashboard_context(request, _project(request, pk)))


def dashboard_context(request, project: Project) -> dict:
    """What the dashboard page shows: the stored summary and the shown batch's piece."""
    done, running = last_analytics(project)
    if done is None and running is None and _first_view_computes(project):
        running = analytics.analytics_enqueue(project, owner=request.user)[0]
    report = done.result if done else None
    # The per-batch progress counts (every live judgement counted) come by fetch from `progress` below,
    # so the page itself reads only the stored summary and the shown batch's piece.
    context = {"project": project, "job": done, "running": running, "report": report,
               "can_manage": selectors.user_can_manage(project=project, user=request.user)}
    if mode_for(project).chooses_fresh:
        context["stop_rows"] = adaptive_stop_rows(project)
        rule = stop_rule(project)
        context["stop_rule"] = rule.explain() if rule else ""
    if report:
        legacy = None
        if report.get("stored") != "per batch":
            report, legacy = _legacy_parts(report)
            context["report"] = report
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
        shown = _shown_batch(report, request.GET.get("batch"))
        piece = None
        if shown is not None:
            piece = legacy.get(shown["id"]) if legacy is not None else _stored_piece(done, shown["id"])
        context["batch_names"] = [b["name"] for b in report.get("batches", [])]
        context["shown_batch"] = shown["name"] if shown else None
        context["batches"] = [_section(piece["scores"])] if piece and piece["scores"] else []
        context["graph_warning"] = ((piece or {}).get("details") or {}).get("graph_warning")
        expected = ((piece or {}).get("details") or {}).get("triads_expected_model", {})
        context["triads_shown"] = [dict(r, expected_model=expected.get(r.get("annotator"))) for r in piece["triads"]] if piece else []
        context["triad_totals"] = report.get("triad_totals", [])
        context["directionality"] = report.get("directionality") or (piece or {}).get("details", {}).get(
            "directionality", [])
        context["directionality_partial"] = not report.get("directionality") and report.get("n_directionality", 0) > 0
        retest = agreement.get("retest") or []
        context["show_retest"] = any(r.get("n_repeated") for r in retest)
    context["annotator_rows"], context["study_shown"] = annotator_rows(project, report)
    return context


def annotator_rows(project: Project, report: dict | None) -> tuple[list[dict], bool]:
    """The annotator table: the stored report's figures per annotator, with each one's study set-up results
    (live, not from the report) under ``study``; annotators with study results and no judgement (one who failed
    the comprehension check) are rows too. Also whether the study columns are shown."""
    study = study_rows(project)
    rows = [dict(r, study=study.pop(r["annotator"], None)) for r in (report or {}).get("per_annotator", [])]
    rows += [{"annotator": name, "study": s, "n_judgements": 0, "majority_units": 0} for name, s in study.items()]
    return rows, study_on(project) or any(r["study"] for r in rows)


ANNOTATOR_COLUMNS = ["annotator", "n_judgements", "majority_agreement", "majority_units", "circular_share",
                     "retest_agreement", "retest_n", "median_ms", "attention_passed", "attention_n", "left_share",
                     "left_low", "left_high", *STUDY_COLUMNS]


@login_required
def annotators_csv(request, pk: int):
    """The dashboard's annotator table as a spreadsheet-safe CSV, study set-up results included."""
    project = _project(request, pk)
    done, _ = last_analytics(project)
    rows, _ = annotator_rows(project, done.result if done else None)
    flat = [{**{k: v for k, v in r.items() if k != "study"}, **{k: (r["study"] or {}).get(k) for k in STUDY_COLUMNS}}
            for r in rows]
    for row in flat:
        if row["consented_at"] is not None:
            row["consented_at"] = row["consented_at"].isoformat()
    response = HttpResponse(csv_text(ANNOTATOR_COLUMNS, flat, mode=SPREADSHEET), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.name}-annotators.csv"'
    return response


@login_required
def progress(request, pk: int):
    """The dashboard's progress table (an HTML fragment the page fetches after it has loaded)."""
    project = _project(request, pk)
    return render(request, "annotation/_dashboard_progress.html", {"progress": batch_progress(project=project)})


@login_required
@require_POST
def recompute(request, pk: int):
    project = _project(request, pk)
    _, created = analytics.analytics_enqueue(project, owner=request.user)  # one recompute at a time
    if created:
        messages.success(request, "Recomputation started; this page shows its progress.")
    return redirect("annotation:dashboard", pk=pk)
