"""Export API for leads and researchers: similarity scores, raw judgements, agreement report.

JSON is paginated; `?format=csv` returns the whole filtered table as CSV. Filters: `batch` (id),
`annotator` (username), `since`/`until` (ISO datetimes). Scores come from the last analytics run,
stored per batch, unless a judgement filter asks for something it does not hold.
"""
from __future__ import annotations

from django.conf import settings
from django.db.models import F, OuterRef, Subquery, Sum
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import analytics, selectors
from annotation.models import AnalyticsBatchResult, Batch, BatchCandidate, Project
from core.pagination import Pagination, list_responses
from core.params import query_datetime, query_id, query_int
from core.renderers import CSVRenderer
from core.schema import OpenEndedSerializer
from jobs.models import Job

FILTERS = [
    OpenApiParameter("batch", OpenApiTypes.INT, description="batch id"),
    OpenApiParameter("annotator", OpenApiTypes.STR, description="annotator username"),
    OpenApiParameter("since", OpenApiTypes.DATETIME, description="judgements at or after"),
    OpenApiParameter("until", OpenApiTypes.DATETIME, description="judgements at or before"),
    OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"]),
]


class ScoreRowSerializer(serializers.Serializer):
    batch = serializers.CharField()
    batch_id = serializers.IntegerField()
    reference_id = serializers.CharField()
    reference_text = serializers.CharField()
    candidate_id = serializers.CharField()
    candidate_text = serializers.CharField()
    wins = serializers.IntegerField()
    comparisons = serializers.IntegerField()
    normalized_score = serializers.FloatField(allow_null=True)
    win_share = serializers.FloatField(allow_null=True)
    bt_strength = serializers.FloatField(allow_null=True, help_text=(
        "Bradley–Terry strength: the posterior mean of the same draws bt_low/bt_high are quantiles of (centred log-odds)"))
    bt_low = serializers.FloatField(allow_null=True)
    bt_high = serializers.FloatField(allow_null=True)
    bt_mc_error = serializers.FloatField(default=None, allow_null=True, help_text=(
        "Monte Carlo standard error of bt_low/bt_high (the larger), from the exact draws; null otherwise"))
    rank = serializers.IntegerField(allow_null=True, help_text="1 = strongest; null for never-compared candidates; "
                                    "equal strengths share the best rank of their group (1, 2, 2, 4)")
    rank_tied = serializers.BooleanField(help_text="another candidate of the batch has the same rank")
    p_above_next = serializers.FloatField(allow_null=True, help_text="posterior probability that this candidate is "
                                          "stronger than the next-ranked one (null for the last)")
    order_claim = serializers.BooleanField(help_text="the order over the next candidate holds family-wise at 95 % "
                                           "(Bonferroni over the batch's adjacent pairs)")
    n_annotators = serializers.IntegerField()
    gold_score = serializers.FloatField(allow_null=True)
    bt_aware_strength = serializers.FloatField(allow_null=True, help_text="annotator-aware Bradley–Terry strength")
    rank_aware = serializers.IntegerField(allow_null=True)
    interval_note = serializers.CharField(allow_null=True, help_text=(
        "why bt_low/bt_high are null, or a warning about them: the exact sampler's convergence alarm, the "
        "Laplace fallback was used, or the interval is a request's approximation"))
    posterior = serializers.CharField(default=None, allow_null=True, help_text=(
        "what gave the interval: exact (the checked exact posterior draws), 'exact, not converged', 'laplace "
        "fallback', 'approximate (importance|laplace)' (computed for this request) or none; null in results stored "
        "before this column"))


JUDGEMENT_COLUMNS = ["id", "batch", "reference_id", "annotator", "verse_a_id", "verse_b_id", "chosen_id", "left_id",
                     "chose_left", "response_ms", "set", "client_uuid", "created", "oriented_a_id", "oriented_b_id",
                     "b_won", "orientation", "attention_check", "attention_passed", "after_close"]


class JudgementRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    batch = serializers.CharField()
    reference_id = serializers.CharField()
    annotator = serializers.CharField()
    verse_a_id = serializers.CharField()
    verse_b_id = serializers.CharField()
    chosen_id = serializers.CharField()
    left_id = serializers.CharField()
    chose_left = serializers.BooleanField()
    response_ms = serializers.IntegerField(allow_null=True)
    set = serializers.IntegerField()
    client_uuid = serializers.UUIDField()
    created = serializers.DateTimeField()
    oriented_a_id = serializers.CharField(help_text="candidate called 'a' by the orientation rule")
    oriented_b_id = serializers.CharField()
    b_won = serializers.BooleanField(help_text="the label the classic (oriented) agreement figures use")
    orientation = serializers.CharField()
    attention_check = serializers.BooleanField(
        help_text="a platform-built attention check (known answer): never part of scores or agreement")
    attention_passed = serializers.BooleanField(allow_null=True, help_text="attention checks only: chose the known answer")
    after_close = serializers.BooleanField(help_text="stored after the batch closed, on a pair served before the close")


class _ExportBase(APIView):
    permission_classes = [IsAuthenticated]
    pagination_class = Pagination  # JSON a page at a time (the schema says so); CSV every row
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]

    def project(self, pk: int) -> Project:
        return selectors.project_get_for(pk=pk, user=self.request.user, access="results",
                                         denied="Exports are for the project's leads and for researchers.")

    def filters(self) -> dict:
        params = self.request.query_params
        batch = query_id(params, "batch")
        return {"batch_ids": [batch] if batch else None, "annotator": params.get("annotator") or None,
                "since": query_datetime(params, "since"), "until": query_datetime(params, "until", end_of_day=True)}

    def respond(self, rows: list[dict]):
        if self.request.accepted_renderer.format == "csv":
            return Response(rows)
        paginator = Pagination()
        page = paginator.paginate_queryset(rows, self.request, view=self)
        return paginator.get_paginated_response(page)


class StoredScoreRows:
    """The scores table of a stored analytics result, read a page at a time: only the batches a
    page covers are decoded (each batch's rows are one AnalyticsBatchResult row)."""

    def __init__(self, job_id: int, batch_id: int | None = None):
        self.pieces = AnalyticsBatchResult.objects.filter(job_id=job_id)
        if batch_id is not None:
            self.pieces = self.pieces.filter(batch_id=batch_id)
        self.batch_id = batch_id

    def count(self) -> int:
        return self.pieces.aggregate(n=Sum("n_rows"))["n"] or 0

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index):
        if not isinstance(index, slice):
            return self[index:index + 1][0]
        start, stop = index.start or 0, index.stop
        pieces = self.pieces.order_by("position")
        if self.batch_id is None:  # the project's table: pieces overlapping [start, stop)
            pieces = pieces.alias(end=F("row_offset") + F("n_rows")).filter(end__gt=start)
            if stop is not None:
                pieces = pieces.filter(row_offset__lt=stop)
            first = pieces.values_list("row_offset", flat=True).first()
        else:
            first = 0
        rows = [row for scores in pieces.values_list("scores", flat=True) for row in scores]
        offset = first or 0
        return rows[start - offset: None if stop is None else stop - offset]


class LiveScoreRows:
    """Scores computed now from the filtered judgements, only for the batches a page covers."""

    def __init__(self, project: Project, filters: dict, n_boot: int):
        self.project, self.filters, self.n_boot = project, filters, n_boot
        batches = Batch.objects.filter(project=project).order_by("id")
        if filters["batch_ids"]:
            batches = batches.filter(pk__in=filters["batch_ids"])
        self.sizes = list(batches.values_list("pk", "n_candidates"))

    def count(self) -> int:
        return sum(size for _, size in self.sizes)

    def __len__(self) -> int:
        return self.count()

    def batches_for(self, start: int, stop: int | None) -> tuple[list[int], int]:
        """Batch ids whose rows fall in [start, stop), and the row index where the first begins."""
        ids, offset, first = [], 0, None
        for batch_id, size in self.sizes:
            if offset + size > start and (stop is None or offset < stop):
                ids.append(batch_id)
                first = offset if first is None else first
            offset += size
        return ids, first or 0

    def __getitem__(self, index):
        if not isinstance(index, slice):
            return self[index:index + 1][0]
        start, stop = index.start or 0, index.stop
        ids, first = self.batches_for(start, stop)
        if not ids:
            return []
        data = analytics.load_project_data(self.project, **dict(self.filters, batch_ids=ids))
        rows = analytics.score_rows(data, n_boot=self.n_boot, exact=False)  # exact draws: the analytics job's
        return rows[start - first: None if stop is None else stop - first]


def latest_stored_analytics(project: Project) -> Job | None:
    """The last succeeded analytics job of the project whose result is stored per batch (no result decoded)."""
    job = (Job.objects.filter(kind="annotation.analytics", params__project_id=project.pk, status=Job.Status.SUCCEEDED)
           .order_by("-finished").only("pk", "finished", "params").first())
    if job is None or not AnalyticsBatchResult.objects.filter(job=job).exists():
        return None
    return job


class ScorePagination(Pagination):
    """The one page shape, plus what the scores are: `source` (stored: the last analytics run; live: computed for
    this request), `n_boot` (posterior draws behind the intervals), `computed_at` and `job` (stored only)."""

    def get_paginated_response_schema(self, schema: dict) -> dict:
        described = super().get_paginated_response_schema(schema)
        described["properties"].update({
            "source": {"type": "string", "enum": ["stored", "live"],
                       "description": "stored: the last analytics run's scores; live: computed for this request"},
            "n_boot": {"type": "integer", "description": "posterior draws behind the rank intervals"},
            "computed_at": {"type": "string", "format": "date-time", "nullable": True,
                            "description": "stored scores: when they were computed (null when live)"},
            "job": {"type": "integer", "nullable": True, "description": "stored scores: the analytics job"},
            "pending_job": {"type": "integer", "nullable": True, "description": (
                "the project's analytics job queued or running, if any (live scores, whose "
                "intervals are approximate, queue one when no stored scores exist; read again when it finished)")},
        })
        described["required"] = [*described["required"], "source", "n_boot", "computed_at", "job", "pending_job"]
        return described


class ProjectScoresApi(_ExportBase):
    """Scores from the last analytics run (the dashboard's "Recompute"), a page at a time, when no
    judgement filter and no other `n_boot` is asked for; otherwise computed now for the batches of
    the requested page only, with at most SIMILIA_EXPORT_MAX_REFITS bootstrap refits per request.
    Responses say which (`source`, `computed_at`, `n_boot`; CSV: `X-Similia-*` headers). A request makes no exact
    posterior draws: live rows carry approximate intervals (`analytics.LIVE_APPROXIMATE` in `interval_note`,
    ``posterior`` "approximate (…)") and `pending_job` names the analytics job that stores the exact ones."""

    csv_columns = analytics.SCORE_COLUMNS
    pagination_class = ScorePagination

    @extend_schema(parameters=FILTERS + [OpenApiParameter("n_boot", OpenApiTypes.INT, description=(
        "posterior draws for the rank intervals; default: the stored result's, or 200 computed now (fewer if "
        "the request would exceed SIMILIA_EXPORT_MAX_REFITS draws × batches)"))], responses=list_responses(ScoreRowSerializer))
    def get(self, request, pk: int):
        project = self.project(pk)
        n_boot = query_int(request.query_params, "n_boot", default=None, min_value=0, max_value=2000)
        return self.scores(project, self.filters(), n_boot)

    def scores(self, project: Project, filters: dict, n_boot: int | None):
        filtered = filters["annotator"] or filters["since"] or filters["until"]
        job = None if filtered else latest_stored_analytics(project)
        if job is not None and n_boot in (None, job.params.get("n_boot", 200)):
            batch_id = filters["batch_ids"][0] if filters["batch_ids"] else None
            rows = StoredScoreRows(job.pk, batch_id)
            return self.respond_rows(rows, source="stored", n_boot=job.params.get("n_boot", 200), job=job)
        rows = LiveScoreRows(project, filters, 0)
        csv = self.request.accepted_renderer.format == "csv"
        page_size = Pagination().get_page_size(self.request)
        page = self.request.query_params.get("page", "1")
        # ASCII digits, at most 9 of them, before int(): a 5,000-digit page was a 500 (int's digit limit)
        start = (int(page) - 1) * page_size if page.isascii() and page.isdigit() and len(page) < 10 and int(page) else 0
        n_batches = max(len(rows.sizes) if csv else len(rows.batches_for(start, start + page_size)[0]), 1)
        budget = settings.SIMILIA_EXPORT_MAX_REFITS
        if n_boot is not None and n_boot * n_batches > budget:
            raise ValidationError({"n_boot": [
                f"n_boot={n_boot} over {n_batches} batch(es) is {n_boot * n_batches:,} posterior draws; at most "
                f"{budget:,} are computed in a request (setting SIMILIA_EXPORT_MAX_REFITS). Ask for fewer, filter by "
                "batch, or recompute on the dashboard and read the stored result (no filters, no n_boot)."]})
        rows.n_boot = n_boot if n_boot is not None else min(200, budget // n_batches)
        # Live rows have approximate intervals (no exact draws in a request): with nothing stored and nothing
        # filtered, queue the analytics job that stores the exact ones.
        pending = analytics.analytics_in_progress(project)
        response = self.respond_rows(rows, source="live", n_boot=rows.n_boot, job=None, pending=pending)
        if pending is None and job is None and not filtered:  # queued once the request is known to be good
            pending = analytics.analytics_enqueue(project)[0]
            if isinstance(response.data, dict):
                response.data["pending_job"] = pending.pk
            response["X-Similia-Pending-Job"] = str(pending.pk)
        return response

    def respond_rows(self, rows, *, source: str, n_boot: int, job: Job | None, pending: Job | None = None):
        about = {"source": source, "n_boot": n_boot, "computed_at": job.finished.isoformat() if job else None,
                 "job": job.pk if job else None, "pending_job": pending.pk if pending else None}
        if self.request.accepted_renderer.format == "csv":
            response = Response(rows[0:None])
        else:
            paginator = self.pagination_class()
            page = paginator.paginate_queryset(rows, self.request, view=self)
            response = paginator.get_paginated_response(page)
            response.data.update(about)
        for key, value in about.items():
            if value is not None:
                response[f"X-Similia-{key.replace('_', '-').title()}"] = str(value)
        return response


class BatchScoresApi(ProjectScoresApi):
    @extend_schema(parameters=FILTERS[1:], responses=list_responses(ScoreRowSerializer))
    def get(self, request, pk: int):
        batch = get_object_or_404(Batch, pk=pk)
        project = self.project(batch.project_id)
        filters = self.filters()
        filters["batch_ids"] = [batch.pk]
        return self.scores(project, filters, None)


class ProjectJudgementsApi(_ExportBase):
    csv_columns = JUDGEMENT_COLUMNS

    @extend_schema(parameters=FILTERS, responses=list_responses(JudgementRowSerializer))
    def get(self, request, pk: int):
        project = self.project(pk)
        f = self.filters()
        qs = selectors.judgements_of(project=project)
        if f["batch_ids"]:
            qs = qs.filter(batch_id__in=f["batch_ids"])
        if f["annotator"]:
            qs = qs.filter(annotator__username=f["annotator"])
        if f["since"]:
            qs = qs.filter(created__gte=f["since"])
        if f["until"]:
            qs = qs.filter(created__lte=f["until"])
        position = BatchCandidate.objects.filter(batch=OuterRef("batch_id"))
        qs = qs.annotate(pos_a=Subquery(position.filter(verse=OuterRef("pair__verse_a_id")).values("position")[:1]),
                         pos_b=Subquery(position.filter(verse=OuterRef("pair__verse_b_id")).values("position")[:1]))
        rows = qs.values("id", "batch__name", "batch__reference__verse_id", "annotator__username",
                         "pair__verse_a__verse_id", "pair__verse_b__verse_id", "chosen__verse_id", "left__verse_id",
                         "chose_left", "response_ms", "set_id", "client_uuid", "created", "pos_a", "pos_b",
                         "pair__attention_answer__verse_id", "after_close")
        renamed = [_judgement_row(r) for r in rows]
        return self.respond(renamed)


def _judgement_row(r: dict) -> dict:
    """One exported judgement, with the orientation the classic agreement figures use
    (analytics.ORIENTATION_RULE: 'a' is the candidate with the lower batch position)."""
    a, b = r["pair__verse_a__verse_id"], r["pair__verse_b__verse_id"]
    check = r["pair__attention_answer__verse_id"]
    if (r["pos_a"] or 0) > (r["pos_b"] or 0):
        a, b = b, a
    return {"id": r["id"], "batch": r["batch__name"], "reference_id": r["batch__reference__verse_id"],
            "annotator": r["annotator__username"], "verse_a_id": r["pair__verse_a__verse_id"],
            "verse_b_id": r["pair__verse_b__verse_id"], "chosen_id": r["chosen__verse_id"],
            "left_id": r["left__verse_id"], "chose_left": r["chose_left"], "response_ms": r["response_ms"],
            "set": r["set_id"], "client_uuid": str(r["client_uuid"]), "created": r["created"].isoformat(),
            "oriented_a_id": a, "oriented_b_id": b, "b_won": r["chosen__verse_id"] == b,
            "orientation": analytics.ORIENTATION_RULE, "attention_check": check is not None,
            "attention_passed": None if check is None else r["chosen__verse_id"] == check,
            "after_close": r["after_close"]}


class AgreementFiguresSerializer(OpenEndedSerializer):
    """`analytics.agreement_report` (schema only): without judgements only `annotators` and `n_judgements`."""

    extra_values = {}
    extra_help = "further statistics as the dashboard shows them (each an object or a list of rows)"
    annotators = serializers.ListField(child=serializers.CharField())
    n_judgements = serializers.IntegerField()
    symmetric = serializers.JSONField(required=False, help_text="the headline figures, invariant to which candidate "
                                      "is called a: every registered statistic and cohen_symmetric")
    orientation_rule = serializers.CharField(required=False, help_text="how the classic coefficients orient a pair")
    cohen = serializers.JSONField(required=False, help_text="mean pairwise Cohen's κ: kappa, n_shared, mean")
    fleiss = serializers.JSONField(required=False)
    krippendorff = serializers.JSONField(required=False)
    retest = serializers.ListField(child=serializers.JSONField(), required=False,
                                   help_text="test–retest agreement per annotator")
    split_half = serializers.ListField(child=serializers.JSONField(), required=False,
                                       help_text="split-half reliability per batch")
    separation = serializers.ListField(child=serializers.JSONField(), required=False, help_text=(
        "per batch: scale-separation reliability measured (point fit) and deflated (posterior), and the leverage of "
        "the stop rule's top-k claim (top_k, leverage: judgements whose removal flips it)"))


class TriadsSerializer(serializers.Serializer):
    per_annotator = serializers.ListField(child=serializers.JSONField(),
                                         help_text="circular triads per annotator × batch (`triads` listed empty)")
    majority = serializers.ListField(child=serializers.JSONField(), help_text="circular triads of the pooled majority")


class AgreementSerializer(serializers.Serializer):
    """What the agreement report answers (schema only): the last analytics run's figures when no filter is given
    (`source` stored, with `computed_at` and `job`), else computed now (`source` live)."""

    agreement = AgreementFiguresSerializer()
    triads = TriadsSerializer()
    source = serializers.ChoiceField(choices=["stored", "live"])
    computed_at = serializers.DateTimeField(required=False, help_text="stored figures: when they were computed")
    job = serializers.IntegerField(required=False, help_text="stored figures: the analytics job")


class ProjectAgreementApi(_ExportBase):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]

    @extend_schema(parameters=FILTERS[:4], responses=AgreementSerializer)
    def get(self, request, pk: int):
        project = self.project(pk)
        filters = self.filters()
        job = None if any(filters.values()) else latest_stored_analytics(project)
        if job is not None:  # the last analytics run, without recomputing (listed triads left out, as below)
            summary = Job.objects.filter(pk=job.pk).values_list("result", flat=True).get()
            per_annotator = [dict(row, triads=[])
                             for triads in AnalyticsBatchResult.objects.filter(job=job).order_by("position")
                             .values_list("triads", flat=True) for row in triads]
            majority = [dict(row, triads=[]) for row in summary["majority_triads"]]
            return Response({"agreement": summary["agreement"], "triads": {"per_annotator": per_annotator,
                                                                         "majority": majority},
                             "source": "stored", "computed_at": job.finished.isoformat(), "job": job.pk})
        data = analytics.load_project_data(project, **filters)
        return Response({"agreement": analytics.agreement_report(data),
                         "triads": analytics.triads_report(data, list_cap=0), "source": "live"})
