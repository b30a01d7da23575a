"""The corpus search API: ``GET /api/v1/corpora/`` (the corpora), ``/corpora/<name>/`` (one, with its works),
``/corpora/<name>/search/?q=...`` (one passage against the corpus: the top k segments with every channel and its
explanation; ``export=csv|json|trec`` downloads it), ``/corpora/<name>/works/<key>/?page=N`` (a work's lines) and
``POST /corpora/<name>/build/`` (leads and researchers: queue the build from a shipped source). An unknown corpus
or work answers 404 with a sentence, an index to rebuild 409."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.pagination import Pagination, paginated
from core.roles import LEAD, RESEARCHER, has_role
from core.schema import OpenEndedSerializer
from detection import corpus_reads as R
from detection.models import SearchCorpus
from detection.services.corpora import SOURCES, SUBSETS, corpus_build_queue


@extend_schema_serializer(component_name="SearchCorpus")
class CorpusSerializer(serializers.ModelSerializer):
    class Meta:
        model = SearchCorpus
        fields = ["name", "description", "language", "status", "n_segments", "index_bytes", "digest", "updated"]
        read_only_fields = fields


class WorkSerializer(serializers.Serializer):
    key = serializers.CharField()
    author = serializers.CharField()
    title = serializers.CharField()
    cite = serializers.CharField()
    genre = serializers.CharField()
    n_segments = serializers.IntegerField()


class BuildSerializer(serializers.Serializer):
    source = serializers.ChoiceField(choices=sorted(SOURCES))
    subset = serializers.ChoiceField(choices=sorted(SUBSETS), default="all")
    extend = serializers.BooleanField(default=False)


class CorpusListApi(APIView):
    permission_classes = [IsAuthenticated]
    pagination_class = Pagination

    @extend_schema(summary="The search corpora", responses=CorpusSerializer(many=True))
    def get(self, request):
        return paginated(request, R.corpora_list(), CorpusSerializer, view=self)


class CorpusDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="One search corpus with its works", responses=OpenEndedSerializer)
    def get(self, request, name: str):
        corpus = R.corpus_get(name)
        return Response({**CorpusSerializer(corpus).data,
                         "works": WorkSerializer(corpus.works.all(), many=True).data})


SEARCH_PARAMS = [
    OpenApiParameter("q", str, description="the passage (at most 400 characters; a longer one is answered 400 saying so, never cut)"),
    OpenApiParameter("k", int, description="hits (1-100, default 20)"),
    OpenApiParameter("author", str, many=True, description="only these authors"),
    OpenApiParameter("work", str, many=True, description="only these works (keys)"),
    OpenApiParameter("genre", str, enum=["verse", "prose"]),
    OpenApiParameter("from_work", str, description="the passage's own work (left out unless include_own)"),
    OpenApiParameter("from_ref", str, description="with from_work: search this line of the corpus instead of q"),
    OpenApiParameter("include_own", bool),
    OpenApiParameter("export", str, enum=["csv", "json", "trec"], description="download the answer"),
]


class CorpusSearchApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="One passage against a corpus: the top k segments, every channel explained",
                   parameters=SEARCH_PARAMS, responses=OpenEndedSerializer)
    def get(self, request, name: str):
        result = R.corpus_search_run(R.corpus_get(name), R.request_from(request.query_params))
        kind = request.query_params.get("export")
        if kind in ("csv", "json", "trec"):
            return R.export_response(result, kind)
        return Response(result)


class WorkLinesApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="A work's lines, a page at a time", responses=OpenEndedSerializer,
                   parameters=[OpenApiParameter("page", int)])
    def get(self, request, name: str, key: str):
        corpus = R.corpus_get(name)
        work = R.work_get(corpus, key)
        return Response({"work": WorkSerializer(work).data,
                         **R.work_lines(corpus, work, request.query_params.get("page"))})


class CorpusBuildApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Queue the build of a corpus's index from a shipped source (leads, researchers)",
                   request=BuildSerializer, responses={202: OpenEndedSerializer})
    def post(self, request, name: str):
        if not has_role(request.user, LEAD, RESEARCHER):
            raise PermissionDenied("Building a corpus is for leads and researchers.")
        s = BuildSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        job = corpus_build_queue(user=request.user, name=name, **s.validated_data)
        return Response({"job": job.pk, "detail": f"the build of {name!r} is queued (job {job.pk})"},
                        status=status.HTTP_202_ACCEPTED)
