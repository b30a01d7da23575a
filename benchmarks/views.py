"""Benchmark pages (server-rendered): researchers see and launch runs; leads may look."""
from __future__ import annotations

from functools import partial, wraps

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe

from benchmarks import charts, exports, selectors
from benchmarks.api import readable_gold_set
from benchmarks.models import EvaluationRun, PilotRun
from benchmarks.services import (
    RunError,
    evaluation_run_create,
    pilot_run_create,
    similarity_run_create,
    version_approve,
)
from benchmarks.services.model_training import training_run_create
from benchmarks.services.runs import (
    CALIBRATIONS,
    DEFAULT_KS,
    POOLS,
    default_pilot_verses_key,
    pilot_verses_files,
    pilot_verses_upload,
    rerankers,
    run_pool,
)
from core import safejson
from core.csv_export import SPREADSHEET
from core.page_actions import form_action, say_queued
from core.roles import LEAD, RESEARCHER, has_role
from core.run_limit_fields import form_field
from core.run_limits import (
    EVALUATION_K,
    EVALUATION_N_FOLDS,
    EVALUATION_SEED,
    EVALUATION_SHARDS,
    EVALUATION_UNIT,
    TRAINING_K,
)
from detection.services.training import FEATURE_METHODS, KINDS, TRAIN_KIND
from jobs.services import job_enqueue_error


def researcher_pages(view, *, leads_post: bool = False):
    """Login required; GET for researchers and leads, POST for researchers (and leads: `leads_post`, where the
    service decides who may); others 403."""

    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        allowed = (RESEARCHER,) if request.method == "POST" and not leads_post else (RESEARCHER, LEAD)
        if not has_role(request.user, *allowed):
            raise PermissionDenied("Benchmarks are for researchers (leads may read).")
        return view(request, *args, **kwargs)

    return wrapped


def _can_launch(request) -> bool:
    return has_role(request.user, RESEARCHER)


class JsonObjectField(forms.CharField):
    def to_python(self, value):
        value = (value or "").strip() or "{}"
        try:
            parsed = safejson.loads(value)
        except safejson.JSONRefused as exc:
            raise forms.ValidationError(str(exc)) from None
        except ValueError as exc:
            raise forms.ValidationError(f"not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise forms.ValidationError('must be a JSON object, e.g. {"k1": 1.2}')
        return parsed


class EvaluationRunForm(forms.Form):
    method = forms.ChoiceField()
    params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 2}),
                              help_text="JSON object of retriever parameters")
    reranker = forms.ChoiceField(choices=lambda: list(rerankers().items()), required=False)
    pool = forms.ChoiceField(choices=list(POOLS.items()), initial="gold", required=False,
                             help_text="what every query is ranked against; the leaderboard ranks each pool apart")
    unit = form_field(EVALUATION_UNIT)
    ks = forms.CharField(initial=", ".join(str(k) for k in DEFAULT_KS), help_text="comma-separated cut-offs")
    split = forms.ChoiceField(choices=EvaluationRun.Split.choices, initial=EvaluationRun.Split.FILE)
    n_folds = form_field(EVALUATION_N_FOLDS)
    seed = form_field(EVALUATION_SEED)
    shards = form_field(EVALUATION_SHARDS)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["method"].choices = [(n, n) for n in selectors.retrieval_method_names()]

    def clean_pool(self):
        return self.cleaned_data.get("pool") or "gold"

    def clean_ks(self):
        try:
            ks = sorted({int(x) for x in self.cleaned_data["ks"].replace(" ", "").split(",") if x})
        except ValueError:
            raise forms.ValidationError("k values must be integers separated by commas") from None
        if not ks:
            raise forms.ValidationError("give at least one k ≥ 1")
        for k in ks:
            EVALUATION_K.check(k, forms.ValidationError)
        return ks


class SimilarityRunForm(forms.Form):
    method = forms.ChoiceField()
    params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 2}),
                              help_text='JSON object of the method\'s declared parameters, e.g. {"model": "NAME"} for '
                                        'transformer methods: a model in the models directory or a hub id '
                                        '(org/name), never a path')
    calibration = forms.ChoiceField(choices=[(c, c or "none") for c in CALIBRATIONS], required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["method"].choices = [(s["name"], f"{s['name']} — {s['description']}")
                                         for s in selectors.similarity_method_specs()]


class PilotRunForm(SimilarityRunForm):
    """A stored verses file is picked by its key (never a path); an upload is checked and stored first."""

    calibration = None
    verses_file = forms.ChoiceField(required=False, label="Stored verses file",
                                    help_text="verses CSVs in the data folders and earlier uploads")
    upload = forms.FileField(required=False, label="…or upload a verses CSV",
                             help_text="columns type_id, id, idoriginal_poem, idgroup, verse[, order] (the DBBE "
                                       "verse sample's layout); used instead of the stored file")
    level = forms.ChoiceField(choices=PilotRun.Level.choices)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        files = pilot_verses_files()
        self.fields["verses_file"].choices = [(key, key.split(":", 1)[1]) for key in files]
        self.fields["verses_file"].initial = default_pilot_verses_key()
        if not files:
            self.fields["verses_file"].help_text = "no verses file is stored yet: upload one"

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.pop("upload", None)
        if upload is not None:
            try:
                cleaned["verses_file"] = pilot_verses_upload(name=upload.name, data=upload.read())
            except RunError as exc:
                self.add_error("upload", str(exc))
        elif not cleaned.get("verses_file"):
            self.add_error("verses_file", "pick a stored verses file or upload one")
        return cleaned


# --------------------------------------------------------------------------------------------- pages
@researcher_pages
def index(request):
    return render(request, "benchmarks/index.html", {
        "versions": selectors.version_list(user=request.user),
        "gold_sets": selectors.gold_set_list(user=request.user),
        "recent_runs": selectors.run_list(user=request.user)[:10],
        "recent_similarity_runs": selectors.similarity_run_list(user=request.user)[:10],
    })


@partial(researcher_pages, leads_post=True)
def version_approve_page(request, pk: int):
    """POST: a lead approves a version promoted from a workbench run (`version_approve` refuses anyone else)."""
    version = get_object_or_404(selectors.versions_visible_to(request.user), pk=pk)
    if request.method == "POST":
        version_approve(version=version, user=request.user)  # refused: a 403 page with the reason (core.middleware)
        messages.success(request, f"{version} is approved: every user now sees it.")
    return redirect("benchmarks:version", pk=pk)


LEADERBOARD_SORTS = ("recall@1", "recall@5", "recall@10", "recall@20", "recall@50", "recall@100", "mrr@10",
                     "cit_recall@10", "cf_recall@10", "cit_recall@100", "cf_recall@100", "rerank_mrr@10",
                     "rerank_recall@10", "rerank_cit_f1", "rerank_cf_f1")


@researcher_pages
def version_detail(request, pk: int):
    version = get_object_or_404(selectors.version_list(user=request.user), pk=pk)
    form = EvaluationRunForm(request.POST or None)
    queued = _queue_from_form(request, form, partial(evaluation_run_create, version=version), label="Run",
                              url_name="benchmarks:run")
    if queued:
        return queued
    sort = request.GET.get("sort", "recall@10")
    pool = request.GET.get("pool", "gold")
    if pool not in POOLS:
        pool = "gold"
    run_pools = selectors.run_pools(version=version)
    runs = selectors.leaderboard(version=version, sort=sort, pool=pool)
    columns = [c for c in LEADERBOARD_SORTS if any(r.summary.get(c) is not None for r in runs)] or ["recall@10"]
    overview = selectors.gold_overview(version=version)
    pool_tabs = [(key, label, sum(1 for p in run_pools.values() if p == key)) for key, label in POOLS.items()]
    return render(request, "benchmarks/version.html", {
        "version": version, "overview": overview, "pool": pool, "pool_label": POOLS[pool], "pool_tabs": pool_tabs,
        "corpus_is_gold": overview["n_source_segments"] <= (overview["total"]["sources"] or 0),
        "runs": runs, "sort": sort, "columns": columns,
        "leaderboard_rows": [(run, [run.summary.get(c) for c in columns]) for run in runs],
        "pending": selectors.run_list(version=version).exclude(job__status__in=["succeeded"])[:20],
        "form": form, "can_launch": _can_launch(request), "can_approve": has_role(request.user, LEAD),
    })


@researcher_pages
def run_detail(request, pk: int):
    run = get_object_or_404(selectors.runs_visible_to(request.user).select_related("version__benchmark", "job", "owner"),
                            pk=pk)
    report = run.report or {}
    pool = run_pool(run)
    context = {"run": run, "report": report, "running": run.report is None and not (run.job and run.job.is_finished),
               "pool": pool, "pool_label": POOLS.get(pool, pool)}
    if report:
        context.update(charts.loci_run_context(run))
        context["worst_queries"] = _with_texts(run, context["worst_queries"])
    return render(request, "benchmarks/run.html", context)


def _with_texts(run, rows: list[dict]) -> list[dict]:
    """The hardest queries with their text and their gold sources (text and rank), two queries in all."""
    gold_by_query: dict[str, list[dict]] = {}
    for pair in (run.report or {}).get("per_pair", []):
        gold_by_query.setdefault(pair["query_id"], []).append(pair)
    query_ids = [row["query_id"] for row in rows]
    source_ids = [p["source_id"] for q in query_ids for p in gold_by_query.get(q, [])]
    q_texts = selectors.segment_texts(corpus_id=run.version.query_corpus_id, seg_ids=query_ids)
    s_texts = selectors.segment_texts(corpus_id=run.version.source_corpus_id, seg_ids=source_ids)
    return [{**row, "text": q_texts.get(row["query_id"], ""),
             "gold": [{**p, "text": s_texts.get(p["source_id"], "")} for p in gold_by_query.get(row["query_id"], [])]}
            for row in rows]


def _report_or_404(run):
    if run.report is None:
        raise Http404("This run has no report yet.")


@researcher_pages
def run_report_json(request, pk: int):
    run = get_object_or_404(selectors.runs_visible_to(request.user), pk=pk)
    _report_or_404(run)
    response = JsonResponse(exports.loci_report(run), json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="loci-run-{run.pk}.json"'
    return response


@researcher_pages
def run_trec(request, pk: int, what: str):
    """A stored run's head as a TREC run (``run.trec``) and the gold it was scored on as qrels (``qrels.txt``)."""
    run = get_object_or_404(selectors.runs_visible_to(request.user).defer(None), pk=pk)
    _report_or_404(run)
    scores = request.GET.get("scores", "method")
    if scores not in ("method", "rank"):
        return HttpResponseBadRequest("scores must be 'method' (the method's scores) or 'rank' (n - rank + 1)",
                                      content_type="text/plain; charset=utf-8")
    response = HttpResponse(exports.loci_trec(run, what, scores=scores), content_type="text/plain; charset=utf-8")
    name = f"loci-run-{run.pk}.trec" if what == "run" else f"loci-run-{run.pk}-qrels.txt"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _queue_from_form(request, form, create, *, label: str, url_name: str | None = None, redirect_to: str = ""):
    """On a valid POST, create the run (or the bare job) from the form's data (``create(owner=...,
    **cleaned_data)``), say it is queued or why its job could not be queued (the job is then failed), and redirect
    to the run's page (``url_name``) or to ``redirect_to``. Otherwise None: the page is shown again, with the
    service's refusal as a form error."""

    def queued(made):
        job = getattr(made, "job", made)  # a run and its job, or the job itself
        say_queued(request, f"{label} {made.pk}", job_enqueue_error(job), job_id=None if job is made else job.pk)
        return redirect(url_name, pk=made.pk) if url_name else redirect(redirect_to)

    return form_action(request, form, lambda data: create(owner=request.user, **data), done=queued)


def _csv_download(text: str, filename: str) -> HttpResponse:
    """A page's download link: SPREADSHEET CSV (formulas neutralised; see core.csv_export)."""
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@researcher_pages
def run_report_csv(request, pk: int, table: str):
    run = get_object_or_404(selectors.runs_visible_to(request.user), pk=pk)
    if table not in exports.LOCI_TABLES:
        raise Http404("Unknown table.")
    _report_or_404(run)
    return _csv_download(exports.loci_csv(run, table, mode=SPREADSHEET), f"loci-run-{run.pk}-{table}.csv")


# ------------------------------------------------------------------------------------------ Greek STS
@researcher_pages
def gold_set_detail(request, pk: int):
    gold_set = get_object_or_404(selectors.gold_set_list(user=request.user), pk=pk)
    form = SimilarityRunForm(request.POST or None)
    queued = _queue_from_form(request, form, partial(similarity_run_create, gold_set=gold_set),
                              label="Similarity run", url_name="benchmarks:similarity-run")
    if queued:
        return queued
    sort = request.GET.get("sort", "spearman")
    return render(request, "benchmarks/gold_set.html", {
        "gold_set": gold_set, "pairs": selectors.gold_pairs(gold_set=gold_set)[:1000],
        "runs": selectors.similarity_leaderboard(gold_set=gold_set, sort=sort), "sort": sort,
        "pending": selectors.similarity_run_list(gold_set=gold_set).filter(report__isnull=True)[:20],
        "form": form, "can_launch": _can_launch(request),
    })


@researcher_pages
def gold_set_csv(request, pk: int):
    gold_set = readable_gold_set(request, pk)
    return _csv_download(exports.gold_set_csv(gold_set, mode=SPREADSHEET), f"gold-set-{gold_set.pk}.csv")


@researcher_pages
def gold_set_json(request, pk: int):
    gold_set = readable_gold_set(request, pk)
    pairs = list(gold_set.pairs.values("reference_id", "candidate_id", "reference_text", "candidate_text", "score"))
    return JsonResponse({"name": gold_set.name, "source": gold_set.source, "provenance": gold_set.provenance,
                         "pairs": pairs}, json_dumps_params={"ensure_ascii": False})


@researcher_pages
def similarity_run_detail(request, pk: int):
    run = get_object_or_404(selectors.similarity_run_list(user=request.user).defer(None), pk=pk)
    context = {"run": run, "report": run.report or {},
               "running": run.report is None and not (run.job and run.job.is_finished)}
    if run.report:
        context.update(charts.similarity_run_context(run))
    return render(request, "benchmarks/similarity_run.html", context)


@researcher_pages
def similarity_run_json(request, pk: int):
    run = get_object_or_404(selectors.similarity_run_list(user=request.user).defer(None), pk=pk)
    _report_or_404(run)
    return JsonResponse(run.report, json_dumps_params={"ensure_ascii": False})


@researcher_pages
def similarity_run_csv(request, pk: int):
    run = get_object_or_404(selectors.similarity_run_list(user=request.user).defer(None), pk=pk)
    _report_or_404(run)
    return _csv_download(exports.similarity_csv(run, mode=SPREADSHEET), f"similarity-run-{run.pk}.csv")


@researcher_pages
def pilot_index(request):
    form = PilotRunForm(request.POST or None, request.FILES or None)
    queued = _queue_from_form(request, form, pilot_run_create, label="Pilot", url_name="benchmarks:pilot")
    if queued:
        return queued
    return render(request, "benchmarks/pilots.html", {"runs": selectors.pilot_run_list()[:50], "form": form,
                                                       "can_launch": _can_launch(request)})


@researcher_pages
def pilot_detail(request, pk: int):
    run = get_object_or_404(PilotRun.objects.select_related("job", "owner"), pk=pk)
    context = {"run": run, "report": run.report or {},
               "running": run.report is None and not (run.job and run.job.is_finished)}
    if run.report:
        context["plot"] = mark_safe(charts.pilot_svg(run))
    return render(request, "benchmarks/pilot.html", context)


@researcher_pages
def pilot_csv(request, pk: int):
    run = get_object_or_404(PilotRun, pk=pk)
    _report_or_404(run)
    return _csv_download(exports.pilot_csv(run, mode=SPREADSHEET), f"pilot-{run.pk}.csv")


class TrainingForm(forms.Form):
    """The models page's training form: the fields of ``POST /api/v1/models/``; every check past the field types is
    ``training_run_create``'s (the API's and ``manage.py train_model``'s), its limits from ``run_limits``."""

    version = forms.ModelChoiceField(queryset=None, label="Benchmark version",
                                     help_text="its folds: one model per fold, each trained on the other folds")
    name = forms.CharField(max_length=100, help_text="the model's name in the models directory (no '/')")
    kind = forms.ChoiceField(choices=[(k, k) for k in KINDS], initial="feature-classifier")
    method = forms.ChoiceField(choices=[(m, m) for m in FEATURE_METHODS] + [("", "— (neural kinds)")],
                               initial="feature-ltr", required=False,
                               help_text="a feature classifier's model; feature-ltr learns to rank")
    base_model = forms.CharField(max_length=200, required=False,
                                 help_text="neural kinds: the stored model to fine-tune, by name")
    params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 2}),
                             help_text='JSON object of the method\'s parameters, e.g. {"query_norm": true}')
    retriever = forms.ChoiceField(initial="bm25-lemma", help_text="the first stage the reranker learns from")
    retriever_params = JsonObjectField(required=False, initial="{}", widget=forms.Textarea(attrs={"rows": 1}),
                                       help_text='JSON object, e.g. {"profile": "prose"} for channels, whose '
                                                 "per-channel scores a feature ranker then learns from")
    k = form_field(TRAINING_K)
    final_model = forms.TypedChoiceField(choices=[("", "default"), ("true", "yes"), ("false", "no")],
                                         required=False, empty_value=None, coerce=lambda v: v == "true",
                                         label="Model on all folds (NAME/all)")

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["version"].queryset = selectors.version_list(user=user)
        self.fields["retriever"].choices = [(n, n) for n in selectors.retrieval_method_names()]


def _training_jobs(user):
    """The latest training jobs, less those on a version `user` may not read."""
    from jobs.models import Job

    return selectors.jobs_visible_to(user, Job.objects.filter(kind=TRAIN_KIND).select_related("owner")
                                     .order_by("-created", "-id"))


@researcher_pages
def trained_models(request):
    """The trained-model registry: every model a training job produced, per fold, with its metrics; researchers
    train one from the form (a job on the cpu or gpu queue, its progress in the training-jobs list)."""
    form = TrainingForm(request.POST or None, user=request.user)
    queued = _queue_from_form(request, form, training_run_create, label="Training job",
                              redirect_to=f"{request.path}#training-jobs")
    if queued:
        return queued
    kind = request.GET.get("kind") or None
    jobs = _training_jobs(request.user)
    return render(request, "benchmarks/models.html", {
        "models": selectors.trained_models_visible_to(request.user, kind=kind)[:500], "kind": kind,
        "kinds": list(KINDS), "form": form, "can_launch": _can_launch(request), "jobs": jobs,
        "running": any(j.status in ("queued", "running") for j in jobs),
        "rerankers": selectors.method_specs(kind="reranker")})


class SuiteForm(forms.Form):
    methods = forms.CharField(initial="bm25-lemma,rrf:bm25-lemma+tesserae,bm25-lemma>feature-ltr,"
                              "bm25-lemma>feature-ltr@lobo", max_length=2000,
                              help_text="comma-separated: a retriever, rrf:A+B, FIRST>RERANKER (k-fold inside each "
                                        "benchmark), FIRST>RERANKER@lobo (trained on the other benchmarks)")
    benchmarks = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, choices=())

    def __init__(self, *args, user=None, **kwargs):
        from benchmarks.services.suite_jobs import stored_benchmark_choices
        from benchmarks.suite.suite import BENCHMARKS

        super().__init__(*args, **kwargs)
        self.fields["benchmarks"].choices = [(n, n) for n in BENCHMARKS] + stored_benchmark_choices(user)
        self.fields["benchmarks"].initial = list(BENCHMARKS)


@researcher_pages
def suite_page(request):
    """The benchmark suite: launch a run (a job), read the tables of the recent ones."""
    from benchmarks.services.suite_jobs import suite_job_create, suite_jobs_visible_to

    form = SuiteForm(request.POST or None, user=request.user)
    queued = _queue_from_form(request, form, suite_job_create, label="Suite job", redirect_to="benchmarks:suite")
    if queued:
        return queued
    jobs = suite_jobs_visible_to(request.user)
    return render(request, "benchmarks/suite.html", {"jobs": jobs, "form": form, "can_launch": _can_launch(request)})
