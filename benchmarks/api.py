"""Benchmarks API: thin views (input serializer → one service/selector → output serializer).

Researchers read and launch runs; leads read; everyone else gets 403 (anonymous 401)."""
from __future__ import annotations

import django_filters
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import ListAPIView
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks import exports, selectors
from benchmarks.models import (
    BenchmarkVersion,
    EvaluationRun,
    GoldReference,
    GoldSimilarityPair,
    GoldSimilaritySet,
    SimilarityRun,
)
from benchmarks.services import evaluation_run_create, similarity_run_create, version_approve
from benchmarks.services import gold_set_publish as gold_publish
from benchmarks.services.runs import POOLS
from core.pagination import CsvListMixin
from core.params import query_int
from core.parsers import JSONField
from core.renderers import csv_mode
from core.roles import LEAD, RESEARCHER, has_role
from core.run_limit_fields import serializer_field
from core.run_limits import (
    EVALUATION_K,
    EVALUATION_N_FOLDS,
    EVALUATION_SEED,
    EVALUATION_SHARDS,
    EVALUATION_UNIT,
    TRAINING_K,
)
from core.schema import OpenEndedSerializer
from jobs.services import job_enqueue_error


class ResearcherOrLeadReads(BasePermission):
    """Reads: researchers and leads. Writes: researchers."""

    message = "This needs the researcher role (leads may read)."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return has_role(request.user, RESEARCHER, LEAD)
        return has_role(request.user, RESEARCHER)


class _Api:
    permission_classes = [ResearcherOrLeadReads]


# ------------------------------------------------------------------------------------ serializers
class VisibleVersionField(serializers.PrimaryKeyRelatedField):
    """A benchmark version id among those the requesting user may read (`selectors.versions_visible_to`): another
    user's version awaiting approval gets the same 400 as an id that does not exist, so nothing is learnt of it."""

    def __init__(self, **kwargs):
        super().__init__(queryset=BenchmarkVersion.objects.none(), **kwargs)  # the model, for the schema's type

    def get_queryset(self):
        request = self.context.get("request")
        return selectors.versions_visible_to(getattr(request, "user", None))


class ReadableGoldSetField(serializers.PrimaryKeyRelatedField):
    """A gold set id among those the requesting user may read (`selectors.gold_set_list`), as `VisibleVersionField`."""

    def __init__(self, **kwargs):
        super().__init__(queryset=GoldSimilaritySet.objects.none(), **kwargs)  # the model, for the schema's type

    def get_queryset(self):
        request = self.context.get("request")
        return selectors.gold_set_list(user=getattr(request, "user", None))


class VersionSerializer(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.name", read_only=True)
    n_gold = serializers.IntegerField(read_only=True)
    n_runs = serializers.IntegerField(read_only=True)

    class Meta:
        model = BenchmarkVersion
        fields = ["id", "benchmark", "version", "description", "provenance", "n_gold", "n_runs", "created",
                  "awaiting_approval"]
        read_only_fields = fields


class GoldReferenceSerializer(serializers.ModelSerializer):
    query_id = serializers.CharField(source="query.seg_id", read_only=True)
    source_id = serializers.CharField(source="source.seg_id", read_only=True)
    query_text = serializers.CharField(source="query.text", read_only=True)
    source_text = serializers.CharField(source="source.text", read_only=True)

    class Meta:
        model = GoldReference
        fields = ["id", "pair_id", "query_id", "source_id", "ref_type", "fold", "provenance", "query_text",
                  "source_text"]
        read_only_fields = fields


class EvaluationRunSerializer(serializers.ModelSerializer):
    job = serializers.IntegerField(source="job_id", read_only=True, allow_null=True)
    status = serializers.CharField(read_only=True)
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)
    pool = serializers.SerializerMethodField(help_text="what each query was ranked against: " + "; ".join(
        f"{k}: {v}" for k, v in POOLS.items()))
    # the parameters each method ran with, read from the stored configurations (the one source)
    params = serializers.JSONField(source="config_params", read_only=True)
    reranker_params = serializers.JSONField(source="reranker_config_params", read_only=True)

    class Meta:
        model = EvaluationRun
        fields = ["id", "version", "method", "params", "reranker", "reranker_params", "split", "n_folds", "ks",
                  "seed", "pool", "unit", "code_version", "job", "status", "owner", "created", "summary"]
        read_only_fields = fields


    def get_pool(self, run) -> str:
        return (run.summary or {}).get("pool") or "gold"


class EvaluationRunDetailSerializer(EvaluationRunSerializer):
    class Meta(EvaluationRunSerializer.Meta):
        fields = EvaluationRunSerializer.Meta.fields + ["per_fold"]
        read_only_fields = fields


class EvaluationRunInputSerializer(serializers.Serializer):
    version = VisibleVersionField()
    method = serializers.CharField(max_length=100)
    params = JSONField(required=False, default=dict)
    reranker = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    reranker_params = JSONField(required=False, default=dict)
    ks = serializers.ListField(child=serializer_field(EVALUATION_K), required=False, allow_empty=False)
    split = serializers.ChoiceField(choices=EvaluationRun.Split.choices, required=False,
                                    default=EvaluationRun.Split.FILE)
    n_folds = serializer_field(EVALUATION_N_FOLDS)
    seed = serializer_field(EVALUATION_SEED)
    pool = serializers.ChoiceField(choices=list(POOLS.items()), required=False, default="gold")
    shards = serializer_field(EVALUATION_SHARDS)
    unit = serializer_field(EVALUATION_UNIT)


class LociQueryRowSerializer(OpenEndedSerializer):
    extra_help = "recall@k of the query for every k of the run's ks"
    query_id = serializers.CharField()
    fold = serializers.IntegerField()
    n_gold = serializers.IntegerField()
    n_cit = serializers.IntegerField()
    n_cf = serializers.IntegerField()
    rr = serializers.FloatField(allow_null=True, help_text="reciprocal rank of the first gold source")
    top = serializers.ListField(child=serializers.ListField(child=serializers.JSONField(), min_length=2, max_length=2),
                                required=False, help_text="the head of the ranked list: [source_id, score] best first")


class LociRunIdentitySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    method = serializers.CharField()
    params = serializers.JSONField()
    reranker = serializers.CharField(allow_blank=True)
    reranker_params = serializers.JSONField()
    split = serializers.CharField()
    n_folds = serializers.IntegerField()
    ks = serializers.ListField(child=serializers.IntegerField())
    seed = serializers.IntegerField()
    code_version = serializers.CharField(allow_blank=True)
    job = serializers.IntegerField(allow_null=True)


class LociReportSerializer(OpenEndedSerializer):
    """`exports.loci_report` (schema only): the pure evaluation's JSON (`benchmarks.loci.evaluate`), its
    per-query rows and the run's identity; sections a run did not compute are absent."""

    extra_help = "recall@k and mrr@k over every query, for every k of the run's ks"
    run = LociRunIdentitySerializer()
    per_query = LociQueryRowSerializer(many=True)
    schema = serializers.CharField(required=False, help_text="the report format's version")
    ks = serializers.ListField(child=serializers.IntegerField(), required=False)
    ties = serializers.CharField(required=False, help_text="how equal scores are ranked")
    seed = serializers.IntegerField(required=False)
    code_version = serializers.CharField(required=False)
    benchmark = serializers.JSONField(required=False, help_text="the benchmark's summary")
    split = serializers.JSONField(required=False, help_text="the cross-validation split")
    method = serializers.JSONField(required=False, help_text="the method as it describes itself")
    pool = serializers.JSONField(required=False, help_text="what each query was ranked against")
    unit = serializers.CharField(required=False, help_text="what the texts were searched as (line, window-2, "
                                 "window-3, sentence); hits scored on the segments they cover")
    by_type = serializers.JSONField(required=False, help_text="recall@k and mrr@k per reference type")
    metrics = serializers.JSONField(required=False, help_text="every metric per reference type: mean and fold spread")
    folds = serializers.ListField(child=serializers.JSONField(), required=False, help_text="one row per fold")
    per_pair = serializers.ListField(child=serializers.JSONField(), required=False,
                                     help_text="each gold link: query_id, source_id, label, fold, rank (null: not found)")
    audit = serializers.JSONField(required=False, help_text="the lexical-overlap audit of the gold pairs")
    strata = serializers.JSONField(required=False, help_text="every metric per overlap bucket")
    author_pairs = serializers.ListField(child=serializers.JSONField(), required=False)
    spearman = serializers.JSONField(required=False, help_text="shared lemmas against correctness")
    pairwise = serializers.JSONField(required=False, help_text="the pairwise classification section")
    rerank = serializers.JSONField(required=False, help_text="the reranker's section, when the run has one")
    timing = serializers.JSONField(required=False, help_text="seconds per stage")


class TrainingQueuedSerializer(serializers.Serializer):
    job = serializers.IntegerField(help_text="the training job")
    queue = serializers.CharField()
    status = serializers.CharField()


class GoldSetSerializer(serializers.ModelSerializer):
    n_pairs = serializers.IntegerField(read_only=True)
    n_runs = serializers.IntegerField(read_only=True)

    class Meta:
        model = GoldSimilaritySet
        fields = ["id", "name", "source", "source_description", "provenance", "n_pairs", "n_runs", "created",
                  "source_project", "published", "published_at"]
        read_only_fields = fields


class GoldPairSerializer(serializers.ModelSerializer):
    class Meta:
        model = GoldSimilarityPair
        fields = ["id", "position", "reference_id", "candidate_id", "reference_text", "candidate_text", "score"]
        read_only_fields = fields


class SimilarityRunSerializer(serializers.ModelSerializer):
    job = serializers.IntegerField(source="job_id", read_only=True, allow_null=True)
    status = serializers.CharField(read_only=True)
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)
    params = serializers.JSONField(source="config_params", read_only=True)  # from the stored configuration

    class Meta:
        model = SimilarityRun
        fields = ["id", "gold_set", "method", "params", "calibration", "code_version", "job", "status", "owner",
                  "created", "rmse", "spearman", "pearson"]
        read_only_fields = fields


class SimilarityRunDetailSerializer(SimilarityRunSerializer):
    class Meta(SimilarityRunSerializer.Meta):
        fields = SimilarityRunSerializer.Meta.fields + ["report"]
        read_only_fields = fields


class SimilarityRunInputSerializer(serializers.Serializer):
    gold_set = ReadableGoldSetField()
    method = serializers.CharField(max_length=100)
    params = JSONField(required=False, default=dict)
    calibration = serializers.ChoiceField(choices=["", "linear", "isotonic"], required=False, default="")


# ------------------------------------------------------------------------------------ Loci Similes
class VersionListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = VersionSerializer

    def get_queryset(self):
        return selectors.version_list(user=self.request.user)


class VersionDetailApi(_Api, APIView):
    @extend_schema(responses=VersionSerializer)
    def get(self, request, pk: int):
        version = get_object_or_404(selectors.version_list(user=request.user), pk=pk)
        data = VersionSerializer(version).data
        data["overview"] = selectors.gold_overview(version=version)
        return Response(data)


class VersionApproveApi(APIView):
    """A lead approves a version promoted from a workbench run (until then only its proposer sees it)."""

    @extend_schema(request=None, responses=VersionSerializer)
    def post(self, request, pk: int):
        version = get_object_or_404(selectors.versions_visible_to(request.user), pk=pk)
        version_approve(version=version, user=request.user)
        return Response(VersionSerializer(selectors.version_list(user=request.user).get(pk=pk)).data)


class GoldReferenceListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = GoldReferenceSerializer

    @extend_schema(parameters=[
        OpenApiParameter("fold", OpenApiTypes.INT, description="only this fold"),
        OpenApiParameter("ref_type", OpenApiTypes.STR, enum=["cit.", "cf.", "link"], description="only this type"),
    ])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return GoldReference.objects.none()
        version = get_object_or_404(selectors.versions_visible_to(self.request.user), pk=self.kwargs["pk"])
        fold = query_int(self.request.query_params, "fold", min_value=-32768, max_value=32767)  # SmallIntegerField
        return selectors.gold_list(version=version, fold=fold, ref_type=self.request.query_params.get("ref_type") or None)


class EvaluationRunFilter(django_filters.FilterSet):
    """`?version=` among the versions the user may read: another user's private version filters like a missing id."""

    version = django_filters.ModelChoiceFilter(queryset=lambda request: selectors.versions_visible_to(
        getattr(request, "user", None)))

    class Meta:
        model = EvaluationRun
        fields = ["version", "method", "reranker"]


class EvaluationRunListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = EvaluationRunSerializer
    filterset_class = EvaluationRunFilter

    @extend_schema(parameters=[OpenApiParameter("pool", OpenApiTypes.STR, enum=list(POOLS),
                                                description="only runs on this pool")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        qs = selectors.run_list(user=self.request.user)
        pool = self.request.query_params.get("pool")
        if pool:
            if pool not in POOLS:
                raise ValidationError({"pool": f"must be one of {', '.join(POOLS)}"})
            legacy = ~Q(summary__has_key="pool") if pool == "gold" else Q(pk__in=[])  # runs before the choice
            qs = qs.filter(Q(summary__pool=pool) | legacy)
        return qs

    @extend_schema(request=EvaluationRunInputSerializer,
                   responses={201: EvaluationRunSerializer, 503: OpenApiTypes.OBJECT})
    def post(self, request):
        data = EvaluationRunInputSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        run = evaluation_run_create(owner=request.user, **data.validated_data)
        return created_or_unavailable(run, EvaluationRunSerializer)


class EvaluationRunDetailApi(_Api, APIView):
    @extend_schema(responses=EvaluationRunDetailSerializer)
    def get(self, request, pk: int):
        run = get_object_or_404(selectors.run_list(user=request.user).defer(None).defer("ranked"), pk=pk)
        return Response(EvaluationRunDetailSerializer(run).data)


class EvaluationRunReportApi(_Api, APIView):
    @extend_schema(responses={200: LociReportSerializer, 409: OpenApiTypes.OBJECT},
                   description="The full report: the pure evaluation's JSON plus per_query rows.")
    def get(self, request, pk: int):
        run = get_object_or_404(selectors.runs_visible_to(request.user), pk=pk)
        if run.report is None:
            return Response({"detail": f"Run {run.pk} has no report yet (status {run.status})."},
                            status=status.HTTP_409_CONFLICT)
        return Response(exports.loci_report(run))


class EvaluationRunCsvApi(_Api, APIView):
    @extend_schema(parameters=[OpenApiParameter("table", OpenApiTypes.STR, enum=list(exports.LOCI_TABLES))],
                   responses={(200, "text/csv"): OpenApiTypes.STR, 409: OpenApiTypes.OBJECT})
    def get(self, request, pk: int):
        run = get_object_or_404(selectors.runs_visible_to(request.user), pk=pk)
        table = request.query_params.get("table", "per_query")
        if table not in exports.LOCI_TABLES:
            return Response({"detail": f"table must be one of {', '.join(exports.LOCI_TABLES)}"}, status=400)
        if run.report is None:
            return Response({"detail": f"Run {run.pk} has no report yet (status {run.status})."},
                            status=status.HTTP_409_CONFLICT)
        return csv_response(exports.loci_csv(run, table, mode=csv_mode(request)), f"loci-run-{run.pk}-{table}.csv")


def created_or_unavailable(run, serializer_class) -> Response:
    """201 with the run, or 503 naming the run, its job and why the job could not be queued (the job is
    then failed, never left looking queued)."""
    error = job_enqueue_error(run.job) if run.job_id else None
    if error:
        return Response({"detail": f"Run {run.pk} was not started: its job {run.job_id} could not be queued. {error}",
                         "run": run.pk, "job": run.job_id, "status": "failed"},
                        status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "30"})
    return Response(serializer_class(run).data, status=status.HTTP_201_CREATED)


def csv_response(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --------------------------------------------------------------------------------------- Greek STS
def readable_gold_set(request, pk: int) -> GoldSimilaritySet:
    """The gold set, or 404 when the user may not read it (a set from another project's batch)."""
    gold_set = get_object_or_404(GoldSimilaritySet, pk=pk)
    if not selectors.gold_set_readable(gold_set=gold_set, user=request.user):
        raise Http404
    return gold_set


class GoldSetListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = GoldSetSerializer

    def get_queryset(self):
        return selectors.gold_set_list(user=self.request.user)


class GoldSetDetailApi(_Api, APIView):
    @extend_schema(responses=GoldSetSerializer)
    def get(self, request, pk: int):
        return Response(GoldSetSerializer(get_object_or_404(selectors.gold_set_list(user=request.user), pk=pk)).data)


class GoldSetPublishInputSerializer(serializers.Serializer):
    published = serializers.BooleanField(default=True)


class GoldSetPublishApi(APIView):
    """A lead of the source project publishes (or withdraws) a gold set made from its batch."""

    @extend_schema(request=GoldSetPublishInputSerializer, responses={200: GoldSetSerializer, 403: OpenApiTypes.OBJECT})
    def post(self, request, pk: int):
        gold_set = readable_gold_set(request, pk)
        data = GoldSetPublishInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        gold_publish(gold_set=gold_set, user=request.user, published=data.validated_data["published"])
        return Response(GoldSetSerializer(get_object_or_404(selectors.gold_set_list(), pk=pk)).data)


class GoldPairListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = GoldPairSerializer
    filterset_fields = ["reference_id"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return GoldSimilarityPair.objects.none()
        return selectors.gold_pairs(gold_set=readable_gold_set(self.request, self.kwargs["pk"]))


class GoldSetCsvApi(_Api, APIView):
    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request, pk: int):
        gold_set = readable_gold_set(request, pk)
        return csv_response(exports.gold_set_csv(gold_set, mode=csv_mode(request)), f"gold-set-{gold_set.pk}.csv")


class SimilarityRunFilter(django_filters.FilterSet):
    """`?gold_set=` among the sets the user may read, as `EvaluationRunFilter`."""

    gold_set = django_filters.ModelChoiceFilter(queryset=lambda request: selectors.gold_set_list(
        user=getattr(request, "user", None)))

    class Meta:
        model = SimilarityRun
        fields = ["gold_set", "method", "calibration"]


class SimilarityRunListApi(CsvListMixin, _Api, ListAPIView):
    serializer_class = SimilarityRunSerializer
    filterset_class = SimilarityRunFilter

    def get_queryset(self):
        return selectors.similarity_run_list(user=self.request.user)

    @extend_schema(request=SimilarityRunInputSerializer,
                   responses={201: SimilarityRunSerializer, 503: OpenApiTypes.OBJECT})
    def post(self, request):
        data = SimilarityRunInputSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        run = similarity_run_create(owner=request.user, **data.validated_data)
        return created_or_unavailable(run, SimilarityRunSerializer)


class SimilarityRunDetailApi(_Api, APIView):
    @extend_schema(responses=SimilarityRunDetailSerializer)
    def get(self, request, pk: int):
        run = get_object_or_404(selectors.similarity_run_list(user=request.user).defer(None), pk=pk)
        return Response(SimilarityRunDetailSerializer(run).data)


class SimilarityRunCsvApi(_Api, APIView):
    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR, 409: OpenApiTypes.OBJECT})
    def get(self, request, pk: int):
        run = get_object_or_404(selectors.similarity_run_list(user=request.user).defer(None), pk=pk)
        if run.report is None:
            return Response({"detail": f"Run {run.pk} has no report yet (status {run.status})."},
                            status=status.HTTP_409_CONFLICT)
        return csv_response(exports.similarity_csv(run, mode=csv_mode(request)), f"similarity-run-{run.pk}.csv")


# ------------------------------------------------------------------------------------ trained models
class TrainedModelSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    method = serializers.CharField()
    base_model = serializers.CharField()
    training_job = serializers.IntegerField(source="training_job_id", allow_null=True)
    benchmark = serializers.CharField()
    train_folds = serializers.JSONField()
    held_out_fold = serializers.IntegerField(allow_null=True)
    params = serializers.JSONField()
    files = serializers.JSONField()
    metrics = serializers.JSONField()
    versions = serializers.JSONField()
    seed = serializers.IntegerField()
    owner = serializers.CharField(source="owner.username", default=None)
    created = serializers.DateTimeField()


class TrainingInputSerializer(serializers.Serializer):
    version = VisibleVersionField()
    kind = serializers.CharField(max_length=30)
    name = serializers.CharField(max_length=100)
    method = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    base_model = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    params = JSONField(required=False, default=dict)
    retriever = serializers.CharField(max_length=100, required=False, default="bm25-lemma")
    retriever_params = JSONField(required=False, default=dict)
    k = serializer_field(TRAINING_K)
    final_model = serializers.BooleanField(required=False, allow_null=True, default=None)


class TrainedModelListApi(CsvListMixin, _Api, ListAPIView):
    """Trained models (one per fold, plus ``<name>/all``); POST queues a training job."""

    serializer_class = TrainedModelSerializer
    filterset_fields = ["kind", "method"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema: no user to filter by
            from detection.models import TrainedModel

            return TrainedModel.objects.none()
        return selectors.trained_models_visible_to(self.request.user)

    @extend_schema(request=TrainingInputSerializer, responses={202: TrainingQueuedSerializer, 400: OpenApiTypes.OBJECT})
    def post(self, request):
        from benchmarks.services.model_training import training_run_create

        data = TrainingInputSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        if not all(isinstance(data.validated_data[f], dict) for f in ("params", "retriever_params")):
            return Response({"detail": "params and retriever_params must be JSON objects"},
                            status=status.HTTP_400_BAD_REQUEST)
        job = training_run_create(owner=request.user, **data.validated_data)  # a DomainError answers 400
        error = job_enqueue_error(job)
        if error:
            return Response({"detail": f"Training job {job.pk} could not be queued. {error}", "job": job.pk},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "30"})
        return Response({"job": job.pk, "queue": job.queue, "status": job.status}, status=status.HTTP_202_ACCEPTED)
