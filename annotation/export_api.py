"""Export API for leads and researchers: similarity scores, raw judgements, agreement report.

JSON is paginated; `?format=csv` returns the whole filtered table as CSV. Filters: `batch` (id),
`annotator` (username), `since`/`until` (ISO datetimes).
"""
from __future__ import annotations

from django.db.models import OuterRef, Subquery
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import analytics, selectors
from annotation.models import Batch, BatchCandidate, Project
from core.params import query_datetime, query_id, query_int
from core.renderers import CSVRenderer

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
    bt_strength = serializers.FloatField(allow_null=True)
    bt_low = serializers.FloatField(allow_null=True)
    bt_high = serializers.FloatField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True, help_text="1 = strongest; null for never-compared candidates")
    n_annotators = serializers.IntegerField()
    gold_score = serializers.FloatField(allow_null=True)
    bt_aware_strength = serializers.FloatField(allow_null=True, help_text="annotator-aware Bradley–Terry strength")
    rank_aware = serializers.IntegerField(allow_null=True)
    interval_note = serializers.CharField(allow_null=True, help_text="why bt_low/bt_high are null, if they are")


JUDGEMENT_COLUMNS = ["id", "batch", "reference_id", "annotator", "verse_a_id", "verse_b_id", "chosen_id", "left_id",
                     "chose_left", "response_ms", "set", "client_uuid", "created", "oriented_a_id", "oriented_b_id",
                     "b_won", "orientation"]


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


class _ExportBase(APIView):
    permission_classes = [IsAuthenticated]
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
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(rows, self.request, view=self)
        return paginator.get_paginated_response(page)


class ProjectScoresApi(_ExportBase):
    csv_columns = analytics.SCORE_COLUMNS

    @extend_schema(parameters=FILTERS + [OpenApiParameter("n_boot", OpenApiTypes.INT, description="posterior draws for the rank intervals (default 200; the strength intervals need none)")],
                   responses=ScoreRowSerializer(many=True))
    def get(self, request, pk: int):
        project = self.project(pk)
        n_boot = query_int(request.query_params, "n_boot", default=200, min_value=0, max_value=2000)
        data = analytics.load_project_data(project, **self.filters())
        return self.respond(analytics.score_rows(data, n_boot=n_boot))


class BatchScoresApi(ProjectScoresApi):
    @extend_schema(parameters=FILTERS[1:], responses=ScoreRowSerializer(many=True))
    def get(self, request, pk: int):
        batch = get_object_or_404(Batch, pk=pk)
        project = self.project(batch.project_id)
        filters = self.filters()
        filters["batch_ids"] = [batch.pk]
        data = analytics.load_project_data(project, **filters)
        return self.respond(analytics.score_rows(data))


class ProjectJudgementsApi(_ExportBase):
    csv_columns = JUDGEMENT_COLUMNS

    @extend_schema(parameters=FILTERS, responses=JudgementRowSerializer(many=True))
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
                         "chose_left", "response_ms", "set_id", "client_uuid", "created", "pos_a", "pos_b")
        renamed = [_judgement_row(r) for r in rows]
        return self.respond(renamed)


def _judgement_row(r: dict) -> dict:
    """One exported judgement, with the orientation the classic agreement figures use
    (analytics.ORIENTATION_RULE: 'a' is the candidate with the lower batch position)."""
    a, b = r["pair__verse_a__verse_id"], r["pair__verse_b__verse_id"]
    if (r["pos_a"] or 0) > (r["pos_b"] or 0):
        a, b = b, a
    return {"id": r["id"], "batch": r["batch__name"], "reference_id": r["batch__reference__verse_id"],
            "annotator": r["annotator__username"], "verse_a_id": r["pair__verse_a__verse_id"],
            "verse_b_id": r["pair__verse_b__verse_id"], "chosen_id": r["chosen__verse_id"],
            "left_id": r["left__verse_id"], "chose_left": r["chose_left"], "response_ms": r["response_ms"],
            "set": r["set_id"], "client_uuid": str(r["client_uuid"]), "created": r["created"].isoformat(),
            "oriented_a_id": a, "oriented_b_id": b, "b_won": r["chosen__verse_id"] == b,
            "orientation": analytics.ORIENTATION_RULE}


class ProjectAgreementApi(_ExportBase):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]

    @extend_schema(parameters=FILTERS[:4], responses=OpenApiTypes.OBJECT)
    def get(self, request, pk: int):
        project = self.project(pk)
        data = analytics.load_project_data(project, **self.filters())
        return Response({"agreement": analytics.agreement_report(data),
                         "triads": analytics.triads_report(data, list_cap=0)})
