"""Workbench API (researchers only): documents, detection runs, candidates with filters, verdicts, exports.

Thin views: an input serializer checks the request's shape, one service or selector does the work."""
from __future__ import annotations

import math

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.api import created_or_unavailable
from benchmarks.models import BenchmarkVersion, Corpus
from benchmarks.selectors import versions_visible_to
from core.action_answers import DoneSerializer, PlanSerializer, done, plan_answer
from core.pagination import Pagination, list_responses, paginated
from core.params import query_choice
from core.parsers import DepthLimitedJSONParser, JSONField
from core.renderers import CSVRenderer
from core.roles import RESEARCHER, has_role
from core.run_limit_fields import serializer_field
from core.run_limits import DETECTION_SHARDS, WORKBENCH_TOP_K, WORKBENCH_UNIT
from detection.api import MethodOutputSerializer
from workbench import exports, methods, selectors
from workbench.engine import explain
from workbench.engine.highlight import highlight_pair
from workbench.engine.uploads import FORMATS
from workbench.models import Candidate, DetectionRun, Document, Verdict
from workbench.services import (
    detection_run_create,
    document_from_corpus,
    document_upload,
    gold_promote,
    run_delete,
    run_delete_plan,
    run_rename,
    verdict_set,
)


class IsResearcher(BasePermission):
    message = "The workbench is for researchers."

    def has_permission(self, request, view) -> bool:
        return has_role(request.user, RESEARCHER)


class _Api(APIView):
    permission_classes = [IsResearcher]


# ------------------------------------------------------------------------------------------ serializers
class DocumentSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)

    class Meta:
        model = Document
        fields = ["id", "name", "format", "language", "owner", "corpus", "n_segments", "provenance", "created"]
        read_only_fields = fields


class DocumentInputSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, help_text="the text (CSV seg_id,text; .tess; TEI XML; plain text)")
    format = serializers.ChoiceField(choices=list(FORMATS), required=False, allow_blank=True,
                                     help_text="default: from the file name's suffix")
    corpus = serializers.PrimaryKeyRelatedField(queryset=Corpus.objects.all(), required=False,
                                                help_text="instead of a file: a stored benchmark corpus")

    def validate(self, attrs):
        if bool(attrs.get("file")) == bool(attrs.get("corpus")):
            raise ValidationError("give either a file or a stored corpus")
        return attrs


class CorpusSerializer(serializers.ModelSerializer):
    n_segments = serializers.IntegerField(read_only=True)

    class Meta:
        model = Corpus
        fields = ["id", "name", "side", "description", "n_segments"]
        read_only_fields = fields


class RunSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True)
    job = serializers.IntegerField(source="job_id", read_only=True, allow_null=True)
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)
    # the parameters each method ran with, read from the stored configurations (the one source)
    retriever_params = serializers.JSONField(source="retriever_config_params", read_only=True)
    reranker_params = serializers.JSONField(source="reranker_config_params", read_only=True)

    class Meta:
        model = DetectionRun
        fields = ["id", "name", "owner", "query_document", "source_document", "retriever", "retriever_params",
                  "reranker", "reranker_params", "top_k", "unit", "min_score", "thresholds", "job", "status", "summary",
                  "notes", "created"]
        read_only_fields = fields


class RunInputSerializer(serializers.Serializer):
    query_document = serializers.PrimaryKeyRelatedField(queryset=Document.objects.all())
    source_document = serializers.PrimaryKeyRelatedField(queryset=Document.objects.all())
    retriever = serializers.CharField(max_length=100, required=False, default=methods.DEFAULT_RETRIEVER,
                                      help_text=f"a registered retriever (GET methods/; default "
                                                f"{methods.DEFAULT_RETRIEVER}, its profile following the unit)")
    retriever_params = JSONField(required=False, default=dict)
    reranker = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    reranker_params = JSONField(required=False, default=dict)
    top_k = serializer_field(WORKBENCH_TOP_K)
    unit = serializer_field(WORKBENCH_UNIT)
    min_score = serializers.FloatField(required=False, allow_null=True, default=None)
    thresholds = JSONField(required=False, default=dict, help_text='{"cit.": 0.5, "cf.": 0.5}')
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    shards = serializer_field(DETECTION_SHARDS)


class VerdictSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Verdict
        fields = ["id", "candidate", "user", "decision", "note", "created", "updated"]
        read_only_fields = fields


class CandidateListSerializer(serializers.ListSerializer):
    """Candidates with their verdicts, read in one query for the whole page (or export)."""

    def to_representation(self, data):
        return super().to_representation(selectors.with_verdicts(data))


class CandidateSerializer(serializers.ModelSerializer):
    query_id = serializers.CharField(source="query.seg_id")
    query_text = serializers.CharField(source="query.text")
    query_author = serializers.CharField(source="query.author")
    source_id = serializers.CharField(source="source.seg_id")
    source_text = serializers.CharField(source="source.text")
    source_author = serializers.CharField(source="source.author")
    verdicts = serializers.SerializerMethodField()

    class Meta:
        model = Candidate
        fields = ["id", "query_id", "query_text", "query_author", "source_id", "source_text", "source_author", "rank",
                  "score", "p_none", "p_cit", "p_cf", "label", "shared_lemmas", "bucket", "explain", "verdicts"]
        read_only_fields = fields
        list_serializer_class = CandidateListSerializer

    @extend_schema_field(VerdictSerializer(many=True))
    def get_verdicts(self, c) -> list[dict]:
        return [VerdictSerializer(v).data for v in getattr(c, "verdict_list", [])]


class CandidatePagination(Pagination):
    """The candidate list's pages: the one page shape, 50 candidates by default and at most 500 (a page carries
    both texts of every pair)."""

    page_size = selectors.PAGE_SIZE
    max_page_size = selectors.MAX_PAGE_SIZE


class ExplainedChannelSerializer(serializers.Serializer):
    name = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    weight = serializers.FloatField(allow_null=True)
    contribution = serializers.FloatField(allow_null=True)
    matches = serializers.ListField(child=serializers.ListField(child=serializers.CharField()),
                                    help_text="[query word, source word] pairs")
    share = serializers.FloatField(help_text="share of the summed positive contributions (the bar)")


class ExplanationSerializer(serializers.Serializer):
    channels = ExplainedChannelSerializer(many=True)
    uniqueness = serializers.IntegerField(allow_null=True, help_text="other passages holding every shared word")
    uniqueness_text = serializers.CharField(help_text="the same in plain words: 'shared by 12 other passages: an "
                                            "uncommon combination'")
    uniqueness_corpus = serializers.CharField(help_text="what the uniqueness counts over: the reference "
                                              "corpus's loci, or the searched sources without its index")
    rarity = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()),
                                   help_text="[word, rarity, 'rare'/'uncommon'/'common'] of the matched words, "
                                             "rarest first")


class HighlightSerializer(serializers.Serializer):
    shared_lemmas = serializers.ListField(child=serializers.CharField())
    query = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()),
                                  help_text="the query text as [piece, shared, channels] pieces; joined: the text")
    source = serializers.ListField(child=serializers.ListField(child=serializers.JSONField()),
                                   help_text="the source text, the same way")


class CandidateDetailSerializer(CandidateSerializer):
    """A candidate as the side-by-side view reads it (schema only)."""

    highlight = HighlightSerializer()
    explanation = ExplanationSerializer(allow_null=True, help_text="null without an explanation")

    class Meta(CandidateSerializer.Meta):
        fields = CandidateSerializer.Meta.fields + ["highlight", "explanation"]
        read_only_fields = fields


class LocalModelSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["word vectors", "model"])
    language = serializers.CharField(required=False, help_text="word vectors: ISO 639 code")
    unit = serializers.CharField(required=False, help_text="word vectors: lemma or form")
    vocab_size = serializers.IntegerField(required=False, allow_null=True)
    shipped = serializers.BooleanField(required=False, help_text="word vectors: shipped in data/vectors/")


class WorkbenchMethodsSerializer(serializers.Serializer):
    retrievers = MethodOutputSerializer(many=True)
    rerankers = MethodOutputSerializer(many=True)
    models = LocalModelSerializer(many=True, help_text="what a parameter of type model may name")


class PromotedVersionSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="the new benchmark version")
    benchmark = serializers.CharField()
    version = serializers.CharField()
    n_gold = serializers.IntegerField()
    added = serializers.IntegerField(help_text="confirmed parallels the base version did not hold")
    awaiting_approval = serializers.BooleanField(help_text="hidden from others until a lead approves it")


class VerdictInputSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Verdict.Decision.choices)
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class PromoteInputSerializer(serializers.Serializer):
    base_version = serializers.PrimaryKeyRelatedField(queryset=BenchmarkVersion.objects.all())
    version = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$", help_text="label of the new version")


# ------------------------------------------------------------------------------------------------ views
class MethodListApi(_Api):
    @extend_schema(responses=WorkbenchMethodsSerializer,
                   description="Registered retrievers and rerankers with their declared parameters, and the models "
                               "this installation has (`models`: what a parameter of type model may name).")
    def get(self, request):
        return Response({"retrievers": methods.specs("retriever"), "rerankers": methods.specs("reranker"),
                         "models": methods.local_models()})


class _ComparedRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    source_id = serializers.CharField()
    score = serializers.FloatField()
    gold = serializers.CharField(allow_null=True, help_text="the gold type (cit./cf.), null when not gold")
    rank_other = serializers.IntegerField(allow_null=True, help_text="its rank in the other run's list, or null")


class _ComparedRunSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    method = serializers.CharField()
    reranker = serializers.CharField(allow_blank=True)
    list = _ComparedRowSerializer(many=True)


class QueryComparisonSerializer(serializers.Serializer):
    query_id = serializers.CharField()
    a = _ComparedRunSerializer()
    b = _ComparedRunSerializer()
    n_gold = serializers.IntegerField()
    only_a = serializers.ListField(child=serializers.CharField(), help_text="gold sources only run a's list holds")
    only_b = serializers.ListField(child=serializers.CharField(), help_text="gold sources only run b's list holds")
    neither = serializers.ListField(child=serializers.CharField(), help_text="gold sources neither list holds")


class CompareQueryApi(_Api):
    @extend_schema(responses=QueryComparisonSerializer, parameters=[
        OpenApiParameter("a", int, required=True), OpenApiParameter("b", int, required=True),
        OpenApiParameter("query", str, required=True)],
        description="One query's ranked lists in two finished evaluation runs, gold marked, and the gold sources "
                    "one list holds that the other does not.")
    def get(self, request):
        a, b, q = (request.query_params.get(k, "") for k in ("a", "b", "query"))
        for name, value in (("a", a), ("b", b)):
            if not (value.isascii() and value.isdigit()):  # "²".isdigit() is True
                raise ValidationError({name: "a run id (a positive integer) is required"})
        if not q:
            raise ValidationError({"query": "a query id is required"})
        data = selectors.query_comparison(int(a), int(b), q, user=request.user)
        return Response({"query_id": q, "a": {"run": data["a"].pk, "method": data["a"].method,
                                              "reranker": data["a"].reranker, "list": data["list_a"]},
                         "b": {"run": data["b"].pk, "method": data["b"].method, "reranker": data["b"].reranker,
                               "list": data["list_b"]},
                         "n_gold": data["n_gold"], "only_a": data["only_a"], "only_b": data["only_b"],
                         "neither": data["neither"]})


class CorpusListApi(_Api):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]

    pagination_class = Pagination

    @extend_schema(responses=list_responses(CorpusSerializer))
    def get(self, request):
        return paginated(request, selectors.corpus_list(), CorpusSerializer, view=self)


class DocumentListApi(_Api):
    pagination_class = Pagination
    parser_classes = [MultiPartParser, FormParser, DepthLimitedJSONParser]

    @extend_schema(responses=DocumentSerializer(many=True))
    def get(self, request):
        return paginated(request, selectors.document_list(user=request.user), DocumentSerializer, view=self)

    @extend_schema(request={"multipart/form-data": DocumentInputSerializer, "application/json": DocumentInputSerializer},
                   responses={201: DocumentSerializer, 400: OpenApiTypes.OBJECT},
                   description="Upload a document (multipart `file`, optional `format`) or copy a stored corpus "
                               "(`corpus`). Limits: SIMILIA_MAX_UPLOAD_MB per file, SIMILIA_IMPORT_MAX_ROWS segments.")
    def post(self, request):
        data = DocumentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data.get("corpus"):
            doc = document_from_corpus(corpus=data.validated_data["corpus"])
        else:
            upload = data.validated_data["file"]
            doc = document_upload(name=upload.name, data=upload.read(), fmt=data.validated_data.get("format"),
                                  owner=request.user)
        return Response(DocumentSerializer(doc).data, status=status.HTTP_201_CREATED)


def _readable_document(request, doc: Document) -> Document:
    if not selectors.document_list(user=request.user).filter(pk=doc.pk).exists():
        raise ValidationError({"document": f"document {doc.pk} is not yours"})
    return doc


class RunListApi(_Api):
    pagination_class = Pagination
    @extend_schema(responses=RunSerializer(many=True))
    def get(self, request):
        return paginated(request, selectors.run_list(user=request.user), RunSerializer, view=self)

    @extend_schema(request=RunInputSerializer, responses={201: RunSerializer, 400: OpenApiTypes.OBJECT,
                                                          503: OpenApiTypes.OBJECT})
    def post(self, request):
        data = RunInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = dict(data.validated_data)
        _readable_document(request, v["query_document"])
        _readable_document(request, v["source_document"])
        run = detection_run_create(owner=request.user, **v)  # a WorkbenchError is a 400 (core.exceptions)
        return created_or_unavailable(run, RunSerializer)


def _run(request, pk: int) -> DetectionRun:
    return get_object_or_404(selectors.run_list(user=request.user), pk=pk)


class RunRenameInputSerializer(serializers.Serializer):
    name = serializers.CharField(allow_blank=True, help_text='at most 200 characters; empty: "Detection <id>"')


class RunDetailApi(_Api):
    """A detection run; its owner renames (PATCH) or deletes it (DELETE: with its candidates and verdicts; its
    documents, promoted versions and job record stay; what goes: `…/delete-plan/`). Another user's run answers
    404 like a missing one."""

    @extend_schema(responses=RunSerializer)
    def get(self, request, pk: int):
        run = _run(request, pk)
        data = RunSerializer(run).data
        data["progress"] = selectors.inspection_progress(run=run, user=request.user)
        return Response(data)

    @extend_schema(request=RunRenameInputSerializer, responses=RunSerializer)
    def patch(self, request, pk: int):
        run = _run(request, pk)
        data = RunRenameInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(RunSerializer(run_rename(run=run, user=request.user, **data.validated_data)).data)

    @extend_schema(request=None, responses={200: DoneSerializer})
    def delete(self, request, pk: int):
        return done(run_delete(run=_run(request, pk), user=request.user))


class RunDeletePlanApi(_Api):
    """What deleting the run removes and keeps; `refused` says why not (its job is still queued or running)."""

    @extend_schema(responses=PlanSerializer)
    def get(self, request, pk: int):
        return plan_answer(run_delete_plan(_run(request, pk)))


FILTER_PARAMS = [
    OpenApiParameter("label", OpenApiTypes.STR, enum=["cit.", "cf.", "none"]),
    OpenApiParameter("min_score", OpenApiTypes.NUMBER, description="retrieval score at least"),
    OpenApiParameter("min_prob", OpenApiTypes.NUMBER, description="P(cit.) or P(cf.) at least"),
    OpenApiParameter("author_pair", OpenApiTypes.STR, description='"query author → source author"'),
    OpenApiParameter("bucket", OpenApiTypes.STR, enum=["bigram", "two_lemmas", "one_lemma", "none"]),
    OpenApiParameter("q", OpenApiTypes.STR, description="text or citation id (either side)"),
    OpenApiParameter("verdict", OpenApiTypes.STR, enum=list(selectors.VERDICT_FILTERS),
                     description="your verdict"),
    OpenApiParameter("order", OpenApiTypes.STR, enum=list(selectors.ORDERS),
                     description="query (default: query order, then rank) or score (the whole run, best first; "
                                 "equal scores in query order, then rank) or refit (the same after re-ranking with "
                                 "your verdicts: refit/)"),
]


def _float(params, name):
    raw = params.get(name)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: [f"{raw[:40]!r} is not a number"]}) from None
    if not math.isfinite(value):
        raise ValidationError({name: ["must be a finite number"]})
    return value


def parse_filters(params) -> selectors.CandidateFilters:
    """Candidate filters from query parameters (400 naming a bad one)."""
    q = (params.get("q") or "").strip()[:200] or None
    return selectors.CandidateFilters(
        label=query_choice(params, "label", ["cit.", "cf.", "none"]), min_score=_float(params, "min_score"),
        min_prob=_float(params, "min_prob"), author_pair=(params.get("author_pair") or None),
        bucket=query_choice(params, "bucket", ["bigram", "two_lemmas", "one_lemma", "none"]), q=q,
        verdict=query_choice(params, "verdict", selectors.VERDICT_FILTERS),
        order=query_choice(params, "order", list(selectors.ORDERS), default="query"))


class CandidateListApi(_Api):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    csv_columns = [f for f in CandidateSerializer.Meta.fields if f != "verdicts"] + ["verdicts"]
    pagination_class = CandidatePagination

    @extend_schema(parameters=FILTER_PARAMS, responses=list_responses(CandidateSerializer),
                   description="Candidates in query order then rank, or the whole run by score (order=score), the "
                               "one page shape: {count, page, pages, page_size, next, previous, results}; each "
                               "with its explanation (`explain`, {} without one). `?format=csv`: every filtered "
                               "candidate, verdicts as `user=decision` joined by `; `.")
    def get(self, request, pk: int):
        run = _run(request, pk)
        filters = parse_filters(request.query_params)
        qs = selectors.candidates(run=run, filters=filters, user=request.user).select_related("query", "source")
        if request.accepted_renderer.format == "csv":  # every filtered candidate, verdicts as one readable cell
            return Response([{**row, "verdicts": "; ".join(f"{v['user']}={v['decision']}" for v in row["verdicts"])}
                             for row in CandidateSerializer(qs, many=True).data])
        return paginated(request, qs, CandidateSerializer, view=self)  # its own order (query, or score) kept


def _candidate(request, pk: int) -> Candidate:
    return get_object_or_404(Candidate.objects.select_related("query", "source", "run"),
                             pk=pk, run__in=selectors.run_list(user=request.user))


class CandidateDetailApi(_Api):
    @extend_schema(responses=CandidateDetailSerializer,
                   description="One candidate with both texts cut into [piece, shared, channels] pieces (shared-lemma "
                               "words marked, each word with the channels that matched it) and `explanation`: every "
                               "channel's contribution and share, the uniqueness (with what it counts over) and the "
                               "matched words' rarity (null "
                               "without an explanation).")
    def get(self, request, pk: int):
        c = _candidate(request, pk)
        c.verdict_list = list(c.verdicts.select_related("user"))
        return Response({**CandidateSerializer(c).data,
                         "highlight": highlight_pair(c.query.text, c.source.text, explain.channels(c.explain)),
                         "explanation": explain.view(c.explain)})


class VerdictApi(_Api):
    @extend_schema(request=VerdictInputSerializer, responses={200: VerdictSerializer, 400: OpenApiTypes.OBJECT})
    def post(self, request, pk: int):
        c = _candidate(request, pk)
        data = VerdictInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        verdict = verdict_set(candidate=c, user=request.user, **data.validated_data)
        return Response({**VerdictSerializer(verdict).data,
                         "progress": selectors.inspection_progress(run=c.run, user=request.user)})


class ExportApi(_Api):
    @extend_schema(parameters=FILTER_PARAMS + [OpenApiParameter("what", OpenApiTypes.STR, enum=["results", "verdicts"]),
                                               OpenApiParameter("as", OpenApiTypes.STR, enum=["csv", "json", "locisimiles"],
                                                                description="file type (default csv; locisimiles: "
                                                                            "the package's results_to_json shape)")],
                   responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT},
                   description="Results (the locisimiles results.csv columns first) or verdicts (its ground_truth.csv "
                               "columns first), filtered like the candidate list.")
    def get(self, request, pk: int):
        run = _run(request, pk)
        return export_response(run, request.query_params, request.user)


def export_response(run, params, user, *, mode: str = "machine"):
    what = query_choice(params, "what", ["results", "verdicts"], default="results")
    fmt = query_choice(params, "as", ["csv", "json", "locisimiles", "trec"], default="csv")
    if fmt == "trec":  # a TREC run (qid Q0 docid rank score tag) for trec_eval, ir-measures, ranx
        if what != "results":
            raise ValidationError({"as": "trec is a results format"})
        qs = selectors.candidates(run=run, filters=parse_filters(params), user=user)
        response = HttpResponse(exports.results_trec(run, qs), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="detection-{run.pk}-results.trec"'
        return response
    if fmt == "locisimiles":  # the package's results_to_json file: {query_id: [matches]}
        if what != "results":
            raise ValidationError({"as": "locisimiles is a results format; verdicts are its ground_truth.csv (as=csv)"})
        qs = selectors.candidates(run=run, filters=parse_filters(params), user=user)
        response = JsonResponse(exports.results_locisimiles(run, qs), json_dumps_params={"ensure_ascii": False})
        response["Content-Disposition"] = f'attachment; filename="detection-{run.pk}-results.locisimiles.json"'
        return response
    if what == "verdicts":
        rows, text = (exports.verdicts(run), None) if fmt == "json" else (None, exports.verdicts_csv(run, mode=mode))
    else:
        qs = selectors.candidates(run=run, filters=parse_filters(params), user=user)
        rows, text = (exports.results(run, qs), None) if fmt == "json" else (None, exports.results_csv(run, qs, mode=mode))
    name = f"detection-{run.pk}-{what}.{fmt}"
    if fmt == "json":
        response = JsonResponse({"run": run.pk, what: rows}, json_dumps_params={"ensure_ascii": False})
    else:
        response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


class RefitChangeSerializer(serializers.Serializer):
    channel = serializers.CharField()
    shipped = serializers.FloatField(help_text="the run's weight (its profile and parameters)")
    fitted = serializers.FloatField(help_text="the weight fitted on the owner's verdicts")
    ratio = serializers.FloatField(help_text="fitted / shipped: above 1 the channel gained weight")


class RefitSerializer(serializers.Serializer):
    """The run's last re-ranking with its owner's verdicts, and the job doing the next one."""

    job = serializers.IntegerField(allow_null=True, help_text="the re-ranking job (GET /api/v1/jobs/<id>/)")
    status = serializers.CharField(allow_null=True, help_text="the job's status; null: never re-ranked")
    fitted = serializers.BooleanField(allow_null=True, help_text="true: new weights order the candidates "
                                      "(order=refit); false: the shipped order was kept (message says why)")
    message = serializers.CharField(allow_blank=True)
    n_positive = serializers.IntegerField(allow_null=True, help_text="confirmed (cit./cf.) verdicts used")
    n_negative = serializers.IntegerField(allow_null=True, help_text="rejected verdicts used")
    needed = serializers.DictField(child=serializers.IntegerField(), help_text="more verdicts needed, by kind "
                                   "(confirmed, rejected)")
    changes = RefitChangeSerializer(many=True, help_text="every channel, the largest gain first")
    verify_next = serializers.ListField(child=serializers.IntegerField(),
                                        help_text="undecided candidates that would teach the weights most")


class RefitApi(_Api):
    """A run's stored re-ranking with its owner's verdicts (an experiment, now in ``perf/verdict_fit.py``: it
    changed per-query recall in none of its stored cells, so no new ones are made). The stored order stays the
    candidate list's ``order=refit``; another user's run answers 404 like a missing one."""

    @staticmethod
    def _state(run) -> dict:
        r = run.refit or {}
        return {"job": run.refit_job_id, "status": run.refit_job.status if run.refit_job_id else None,
                "fitted": r.get("fitted"), "message": r.get("message", ""), "n_positive": r.get("n_positive"),
                "n_negative": r.get("n_negative"), "needed": r.get("needed") or {}, "changes": r.get("changes") or [],
                "verify_next": r.get("verify_next") or []}

    @extend_schema(responses=RefitSerializer)
    def get(self, request, pk: int):
        return Response(self._state(_run(request, pk)))


class PromoteApi(_Api):
    @extend_schema(request=PromoteInputSerializer, responses={201: PromotedVersionSerializer, 400: OpenApiTypes.OBJECT},
                   description="A new version of the benchmark: the base version's gold plus this run's confirmed "
                               "parallels (the run must compare the version's own corpora).")
    def post(self, request, pk: int):
        run = _run(request, pk)
        data = PromoteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        base = data.validated_data["base_version"]
        if not versions_visible_to(request.user).filter(pk=base.pk).exists():
            raise ValidationError({"base_version": [f'Invalid pk "{base.pk}" - object does not exist.']})
        new = gold_promote(run=run, user=request.user, base=base,
                           version=data.validated_data["version"])
        return Response({"id": new.pk, "benchmark": new.benchmark.name, "version": new.version,
                         "n_gold": new.gold.count(), "added": new.provenance["promoted"]["added"],
                         "awaiting_approval": new.awaiting_approval},
                        status=status.HTTP_201_CREATED)
