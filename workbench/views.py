"""Workbench pages (server-rendered; the explorer adds keyboard navigation and verdicts in explore.js)."""
from __future__ import annotations

import json
import re
from functools import wraps

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.exceptions import ValidationError

from benchmarks.models import Corpus, EvaluationRun
from benchmarks.selectors import segment_texts, versions_visible_to
from benchmarks.services.runs import POOLS, run_pool
from benchmarks.views import JsonObjectField
from core.csv_export import SPREADSHEET
from core.page_actions import form_action, page_action, say_done, say_queued
from core.roles import RESEARCHER, has_role
from core.run_limit_fields import form_field
from core.run_limits import WORKBENCH_TOP_K, WORKBENCH_UNIT
from detection import corpus_reads
from frontend.confirm import confirm_page
from jobs.services import job_enqueue_error
from workbench import methods, selectors
from workbench.api import export_response, parse_filters
from workbench.engine import compare as C
from workbench.engine.uploads import FORMATS
from workbench.models import Document
from workbench.services import (
    WorkbenchError,
    detection_run_create,
    document_from_corpus,
    document_from_corpus_work,
    document_upload,
    gold_promote,
    run_delete_plan,
)
from workbench.services import run_delete as run_delete_service
from workbench.services import run_rename as run_rename_service


def researcher_only(view):
    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not has_role(request.user, RESEARCHER):
            raise PermissionDenied("The workbench is for researchers.")
        return view(request, *args, **kwargs)

    return wrapped


class DetectForm(forms.Form):
    """Two documents (each an upload, one of the user's documents or a stored corpus), the methods and cut-offs."""

    query_file = forms.FileField(required=False, label="Query text: upload")
    query_stored = forms.ChoiceField(required=False, label="…or a stored text")
    source_file = forms.FileField(required=False, label="Source text: upload")
    source_stored = forms.ChoiceField(required=False, label="…or a stored text")
    file_format = forms.ChoiceField(required=False, label="Format of the uploads",
                                    choices=[("", "from the file name")] + list(FORMATS.items()))
    retriever = forms.ChoiceField()
    retriever_params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 1}),
                             help_text="JSON object of the retriever's declared parameters")
    reranker = forms.ChoiceField(required=False)
    reranker_params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 1}))
    top_k = form_field(WORKBENCH_TOP_K)
    unit = form_field(WORKBENCH_UNIT)
    min_score = forms.FloatField(required=False, help_text="drop candidates whose retrieval score is lower")
    threshold_cit = forms.FloatField(min_value=0, max_value=1, initial=0.5, label="Threshold cit.")
    threshold_cf = forms.FloatField(min_value=0, max_value=1, initial=0.5, label="Threshold cf.")
    name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        stored = [("", "—")]
        stored += [(f"doc:{d.pk}", f"{d.name} ({d.n_segments} segments)")
                   for d in selectors.document_list(user=user).filter(corpus__isnull=True)[:200]]
        stored += [(f"corpus:{c.pk}", f"stored corpus {c} ({c.n_segments} segments)") for c in selectors.corpus_list()]
        stored += [(f"work:{w.corpus.name}/{w.key}", f"corpus {w.corpus.name}: {w.author}, {w.title} "
                    f"({w.n_segments} segments)") for w in corpus_reads.ready_works()]
        self.fields["query_stored"].choices = self.fields["source_stored"].choices = stored
        retrievers = methods.specs("retriever")
        self.fields["retriever"].choices = [(s["name"], f"{s['name']} — {s['description']}") for s in retrievers]
        self.fields["retriever"].initial = methods.DEFAULT_RETRIEVER
        self.fields["reranker"].choices = [("", "none (retrieval only)")] + [
            (s["name"], f"{s['name']} — {s['description']}") for s in methods.specs("reranker")]
        self.user = user

    def clean(self):
        cleaned = super().clean()
        for side in ("query", "source"):
            if bool(cleaned.get(f"{side}_file")) == bool(cleaned.get(f"{side}_stored")):
                self.add_error(f"{side}_file", f"upload a {side} text or pick a stored one (one of the two)")
        return cleaned

    def document(self, side: str) -> Document:
        upload = self.cleaned_data.get(f"{side}_file")
        if upload:
            return document_upload(name=upload.name, data=upload.read(), fmt=self.cleaned_data.get("file_format"),
                                   owner=self.user)
        kind, _, pk = self.cleaned_data[f"{side}_stored"].partition(":")
        if kind == "corpus":
            return document_from_corpus(corpus=get_object_or_404(Corpus, pk=pk))
        if kind == "work":
            name, _, key = pk.partition("/")
            return document_from_corpus_work(corpus=name, work=key, owner=self.user)
        return get_object_or_404(selectors.document_list(user=self.user), pk=pk)


@researcher_only
def index(request):
    form = DetectForm(request.POST or None, request.FILES or None, user=request.user)

    @transaction.atomic
    def create(d):
        return detection_run_create(
            query_document=form.document("query"), source_document=form.document("source"),
            retriever=d["retriever"], retriever_params=d["retriever_params"], reranker=d["reranker"] or "",
            reranker_params=d["reranker_params"] if d["reranker"] else {}, top_k=d["top_k"],
            unit=d["unit"] or "line", min_score=d["min_score"], thresholds={"cit.": d["threshold_cit"], "cf.": d["threshold_cf"]},
            name=d["name"], owner=request.user)

    def queued(run):
        say_queued(request, f"Detection {run.pk}", job_enqueue_error(run.job), job_id=run.job_id)
        for doc in (run.query_document, run.source_document):
            if doc.provenance.get("skipped"):  # read as `detect --skip-bad-rows` reads it
                messages.warning(request, f"{doc.name}: {doc.provenance['skipped']} "
                                          f"({'; '.join(doc.provenance['skipped_rows'][:3])}).")
        return redirect("workbench:run", pk=run.pk)

    answered = form_action(request, form, create, done=queued)
    if answered:
        return answered
    return render(request, "workbench/index.html", {
        "form": form, "runs": selectors.run_list(user=request.user)[:50],
        "documents": selectors.document_list(user=request.user)[:50],
        "max_mb": f"{settings.SIMILIA_MAX_UPLOAD_BYTES // (1024 * 1024)} MB", "max_segments": f"{settings.SIMILIA_IMPORT_MAX_ROWS:,}",
        "method_specs": mark_safe(json.dumps({"retrievers": methods.specs("retriever"),
                                              "rerankers": methods.specs("reranker"),
                                              "models": methods.local_models()}).replace("</", "<\\/")),
    })


def _page_number(request) -> int:
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1


def _label_rows(run) -> list[tuple[str, float, float | None]]:
    """The reranker check's label shares as rows in the decision order none, cit., cf. (a stored JSON object's
    key order is not kept by PostgreSQL's jsonb)."""
    check = (run.job.result or {}).get("reranker_check") if run.job is not None else None
    if not check:
        return []
    from detection.methods.rerank.rerankers import LABEL_NAMES  # none, cit., cf.: the order the check counts in

    shares, trained = check.get("labels") or {}, check.get("training_labels") or {}
    return [(name, shares[name], trained.get(name)) for name in LABEL_NAMES if name in shares]


@researcher_only
def run_page(request, pk: int):
    run = get_object_or_404(selectors.run_list(user=request.user), pk=pk)
    finished = run.job is not None and run.job.is_finished
    context = {"run": run, "running": not finished, "label_rows": _label_rows(run), "refit": run.refit,
               "setup": [(name, methods.changed_params(config)) for name, config in (
                   (run.retriever, run.retriever_method_config), (run.reranker, run.reranker_method_config)) if name]}
    if finished and run.job.status == "succeeded":
        try:
            filters = parse_filters(request.GET)
        except ValidationError as exc:
            messages.error(request, f"Filter ignored: {exc.detail}")
            filters = selectors.CandidateFilters()
        qs = selectors.candidates(run=run, filters=filters, user=request.user)
        page = selectors.candidate_page(qs, page=_page_number(request))
        by_score = filters.order != "query"  # a whole-run order: the shipped scores or the re-ranked ones
        groups: list[dict] = []
        for n, row in enumerate(page["rows"]):
            row.position = (page["page"] - 1) * page["page_size"] + n + 1  # place in the run's score order
            if by_score or not groups or groups[-1]["query"].pk != row.query_id:
                groups.append({"query": row.query, "rows": []})
            groups[-1]["rows"].append(row)
        query_string = request.GET.copy()
        query_string.pop("page", None)
        unordered = query_string.copy()
        unordered.pop("order", None)
        context.update({
            "by_score": by_score, "unordered_query": unordered.urlencode(), "reranked": bool(run.reranker),
            "label_choices": ["cit.", "cf.", "none"], "bucket_choices": ["bigram", "two_lemmas", "one_lemma", "none"],
            "verdict_choices": list(selectors.VERDICT_FILTERS),
            "filters": filters, "page": page, "groups": groups, "query_string": query_string.urlencode(),
            "filters_active": any(request.GET.get(k) for k in ("label", "min_score", "min_prob", "author_pair",
                                                                "bucket", "verdict", "q")),
            "author_pairs": selectors.author_pairs(run=run),
            "progress": selectors.inspection_progress(run=run, user=request.user),
            "versions": [v for v in versions_visible_to(request.user).select_related("benchmark")
                         if v.query_corpus_id == run.query_document.corpus_id
                         and v.source_corpus_id == run.source_document.corpus_id],
        })
    return render(request, "workbench/run.html", context)


@researcher_only
def run_export(request, pk: int):
    run = get_object_or_404(selectors.run_list(user=request.user), pk=pk)
    return page_action(request, lambda: export_response(run, request.GET, request.user, mode=SPREADSHEET),
                       back=reverse("workbench:run", args=[pk]), refused="Export refused", errors=ValidationError)


@researcher_only
@require_POST
def run_rename(request, pk: int):
    run = get_object_or_404(selectors.run_list(user=request.user), pk=pk)
    back = reverse("workbench:run", args=[pk])
    return page_action(request, lambda: run_rename_service(run=run, user=request.user, name=request.POST.get("name", "")),
                       done=say_done(request, back, lambda _: f"Renamed: {run}. Its candidates, verdicts and exports "
                                                               "follow it."),
                       back=back, refused="Not renamed", errors=WorkbenchError)


@researcher_only
@require_http_methods(["GET", "POST"])
def run_delete(request, pk: int):
    """The run's owner deletes it after a confirmation page that says what goes and what is kept."""
    run = get_object_or_404(selectors.run_list(user=request.user), pk=pk)
    if request.method == "GET":
        return confirm_page(request, title=f"Delete {run}?", action=request.path,
                            cancel=reverse("workbench:run", args=[pk]), button="Delete the run",
                            **run_delete_plan(run))
    return page_action(request, lambda: run_delete_service(run=run, user=request.user),
                       done=say_done(request, reverse("workbench:index")), back=reverse("workbench:run", args=[pk]),
                       errors=WorkbenchError)


@researcher_only
def run_promote(request, pk: int):
    run = get_object_or_404(selectors.run_list(user=request.user), pk=pk)
    if request.method != "POST":
        return redirect("workbench:run", pk=pk)
    base = get_object_or_404(versions_visible_to(request.user), pk=request.POST.get("base_version") or 0)

    def promoted(new):
        pending = " It waits for a lead's approval; until then only you see it." if new.awaiting_approval else ""
        messages.success(request, f"{new}: {new.gold.count()} gold references "
                                  f"({new.provenance['promoted']['added']} confirmed here).{pending}")
        return redirect("benchmarks:version", pk=new.pk)

    return page_action(request, lambda: gold_promote(run=run, base=base, user=request.user,
                                                     version=(request.POST.get("version") or "").strip()[:50]),
                       done=promoted, back=reverse("workbench:run", args=[pk]), errors=WorkbenchError)


@researcher_only
def compare_page(request):
    runs = list(selectors.comparable_runs(user=request.user)[:200])
    context = {"runs": runs, "a": None, "b": None}
    ids = [request.GET.get("a"), request.GET.get("b")]
    # ASCII digits only, within a primary key's range ("²" passes str.isdigit() and failed the lookup: a 500)
    if all(i and re.fullmatch(r"[0-9]{1,18}", i) for i in ids):
        a = get_object_or_404(selectors.comparable_runs(user=request.user).defer(None), pk=ids[0])
        b = get_object_or_404(selectors.comparable_runs(user=request.user).defer(None), pk=ids[1])
        context.update(compare_context(a, b))
    elif any(ids):
        messages.error(request, "Pick two runs: a and b are run numbers (digits 0-9).")
        return render(request, "workbench/compare.html", context, status=400)
    return render(request, "workbench/compare.html", context)


@researcher_only
def compare_detections_page(request):
    """Two workbench detections, or a detection and an evaluation run on a benchmark over the same two texts: the
    pairs each proposes that the other does not (``b`` is a detection id, or ``run-ID`` for an evaluation run)."""
    finished = selectors.run_list(user=request.user).filter(job__status="succeeded")
    context = {"detections": finished[:200], "a": None, "b": None}
    a_id, b_id = request.GET.get("a", ""), request.GET.get("b", "")
    if not (a_id or b_id):
        return render(request, "workbench/compare_detections.html", context)
    b_match = re.fullmatch(r"(run-)?([0-9]{1,18})", b_id)
    if not (re.fullmatch(r"[0-9]{1,18}", a_id) and (b_match or not b_id)):
        messages.error(request, "Pick two runs: a is a detection number, b a detection number or run-N for an "
                                "evaluation run (digits 0-9).")
        return render(request, "workbench/compare_detections.html", context, status=400)
    a = get_object_or_404(finished, pk=a_id)
    context.update(a=a, runs=selectors.same_text_runs(a, user=request.user))
    if not b_id:  # A picked (from its run page): B to choose, evaluation runs on the same texts offered
        return render(request, "workbench/compare_detections.html", context)
    warnings, gold = [], {}
    if b_match.group(1):
        b = get_object_or_404(selectors.comparable_runs(user=request.user).defer(None), pk=b_match.group(2))
        lists_b, gold = selectors.evaluation_lists(b, top_k=a.top_k)
        if b not in context["runs"]:
            warnings.append(f"evaluation run {b.pk} is on {b.version}, whose texts are not this detection's")
    else:
        b = get_object_or_404(finished, pk=b_match.group(2))
        lists_b = selectors.detection_lists(b)
        if (a.query_document_id, a.source_document_id) != (b.query_document_id, b.source_document_id):
            warnings.append("the detections ran on different texts: only segment ids the two share can agree")
        if a.unit != b.unit:
            warnings.append(f"the detections cut the texts differently (unit {a.unit} vs {b.unit})")
    if a.top_k != getattr(b, "top_k", a.top_k):
        warnings.append(f"the detections keep different numbers of candidates per query ({a.top_k} vs {b.top_k})")
    context.update({"a": a, "b": b, "b_is_detection": isinstance(b, type(a)), "warnings": warnings,
                    "diff": C.list_differences(selectors.detection_lists(a), lists_b, gold)})
    return render(request, "workbench/compare_detections.html", context)


@researcher_only
def compare_query_page(request):
    """One query's two ranked lists side by side, gold marked (from a row of the comparison page)."""
    from django.http import Http404

    a, b, q = request.GET.get("a", ""), request.GET.get("b", ""), request.GET.get("q", "")
    if not (a.isascii() and a.isdigit() and b.isascii() and b.isdigit() and q):  # "²".isdigit() is True
        raise Http404("a, b (run ids) and q (a query id) are required")
    try:
        context = selectors.query_comparison(int(a), int(b), q, user=request.user)
    except selectors.ComparisonNotFound as exc:
        raise Http404(str(exc)) from None
    context["lists"] = [("A", context["a"], context["list_a"]), ("B", context["b"], context["list_b"])]
    return render(request, "workbench/compare_query.html", context)


def _curves(a: EvaluationRun, b: EvaluationRun) -> tuple[str, str | None]:
    """Recall@k of both runs (mean ± std over folds, the run pages' chart) and P/R/F1 vs k of the retrieval stage."""
    from benchmarks.loci.plots import recall_curve_svg
    from frontend.svg import line_chart

    labelled = [{**run.report, "method": {**(run.report.get("method") or {}), "name": f"{name}: run {run.pk} {run.method}"}}
                for run, name in ((a, "A"), (b, "B"))]
    recall = recall_curve_svg(labelled, views=("all",), title="Recall@k")
    prf: dict[str, list] = {}
    for run, name in ((a, "A"), (b, "B")):
        sweep = ((run.report.get("pairwise") or {}).get("sweep") or {}).get("all") or []
        for m in ("p", "r", "f1"):
            if sweep and "ret" in sweep[0]:
                prf[f"{name}: {m.upper()}"] = [(r["k"], r["ret"][m]["mean"]) for r in sweep]
    prf_svg = line_chart(prf, title="P/R/F1 vs k (retrieval)", xlabel="k", ylabel="score", ymin=0.0, ymax=1.0) if prf else None
    return recall, prf_svg


def compare_context(a: EvaluationRun, b: EvaluationRun) -> dict:
    """Metric deltas, gold found by one run and missed by the other, per-query differences, overlaid curves."""
    pool_a, pool_b = run_pool(a), run_pool(b)
    warnings = []
    if a.version_id != b.version_id:
        warnings.append(f"the runs are on different benchmark versions ({a.version} vs {b.version})")
    if pool_a != pool_b:
        warnings.append(f"the runs rank against different pools ({pool_a} vs {pool_b}): their figures are not comparable")
    ks = sorted(set(a.ks or []) & set(b.ks or [])) or [10]
    k = 10 if 10 in ks else ks[-1]
    recall_svg, prf_svg = _curves(a, b)
    gold = C.gold_differences(a.report.get("per_pair", []), b.report.get("per_pair", []), k)
    rows = gold["only_a"] + gold["only_b"]  # shown with both texts, read from the version's corpora
    qtext = segment_texts(corpus_id=a.version.query_corpus_id, seg_ids={r["query_id"] for r in rows})
    stext = segment_texts(corpus_id=a.version.source_corpus_id, seg_ids={r["source_id"] for r in rows})
    for r in rows:
        r["query_text"], r["source_text"] = qtext.get(r["query_id"], ""), stext.get(r["source_id"], "")
    return {"a": a, "b": b, "pool_a": POOLS.get(pool_a, pool_a), "pool_b": POOLS.get(pool_b, pool_b),
            "warnings": warnings, "k": k,
            "metrics": C.metric_rows(C.final_summary(a.summary), C.final_summary(b.summary)),
            "gold": gold,
            "queries": C.query_differences(a.per_query, b.per_query), "recall_svg": mark_safe(recall_svg),
            "prf_svg": mark_safe(prf_svg) if prf_svg else None}
