"""Read-only API over the method registry (``detection.methods.registry``): what each detection method is and
which parameters it takes, so scripts and the UI's method pickers can build a valid request.

``GET /api/v1/methods/`` (optional ``kind`` and ``language`` filters) and ``GET /api/v1/methods/<name>/``. Any
signed-in user may read them; nothing here writes.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.pagination import Pagination, paginated
from detection.methods import UnknownMethod, registry


class ParamOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.ChoiceField(choices=registry.PARAM_TYPES)
    default = serializers.JSONField(allow_null=True)
    help = serializers.CharField(allow_blank=True)
    min = serializers.FloatField(required=False)
    max = serializers.FloatField(required=False)
    choices = serializers.ListField(child=serializers.JSONField(), required=False)
    nullable = serializers.BooleanField(required=False)


class MethodOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=registry.KINDS)
    description = serializers.CharField()
    languages = serializers.ListField(child=serializers.CharField())
    supervised = serializers.BooleanField()
    needs_gpu = serializers.BooleanField()
    queue = serializers.ChoiceField(choices=("cpu", "gpu"))
    params = ParamOutputSerializer(many=True)


def _choice(request, name: str, allowed) -> str | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    if value not in allowed:
        raise ValidationError({name: f"must be one of {', '.join(allowed)}"})
    return value


class MethodListApi(APIView):
    permission_classes = [IsAuthenticated]
    pagination_class = Pagination  # the schema's page shape; `paginated` pages the answer

    @extend_schema(
        summary="Detection methods of the registry, with their parameters",
        parameters=[OpenApiParameter("kind", str, enum=list(registry.KINDS), description="only methods of this kind"),
                    OpenApiParameter("language", str, description="only methods for this language (ISO 639: la, grc)")],
        responses=MethodOutputSerializer(many=True))
    def get(self, request):
        kind = _choice(request, "kind", registry.KINDS)
        languages = sorted({lang for spec in registry.specs() for lang in spec.languages})
        language = _choice(request, "language", languages)
        specs = registry.specs(kind=kind, language=language)
        return paginated(request, [spec.as_dict() for spec in specs], MethodOutputSerializer, view=self)


class MethodDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="One detection method and its parameters", responses=MethodOutputSerializer)
    def get(self, request, name: str):
        try:
            spec = registry.get_spec(name)
        except UnknownMethod as exc:
            raise NotFound(str(exc)) from None
        return Response(MethodOutputSerializer(spec.as_dict()).data)
