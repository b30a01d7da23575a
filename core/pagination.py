"""The one pagination of every API list: `?page=N&page_size=M` (M from 1 to `MAX_PAGE_SIZE`, default the
`PAGE_SIZE` setting), answered as `{"count", "page", "pages", "page_size", "next", "previous", "results"}`.
A bad `page_size` is a 400 naming it (core.params), never a silent clamp."""
from __future__ import annotations

import json
import math

from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from core.params import query_int
from core.renderers import CSVRenderer

MAX_PAGE_SIZE = 1000


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request) -> int:
        return query_int(request.query_params, self.page_size_query_param, default=self.page_size, min_value=1,
                         max_value=self.max_page_size)

    def get_previous_link(self) -> str | None:
        """The previous page's link, naming its page even when it is the first (as ``next`` names its page)."""
        if not self.page.has_previous():
            return None
        return replace_query_param(self.request.build_absolute_uri(), self.page_query_param,
                                   self.page.previous_page_number())

    def get_paginated_response(self, data) -> Response:
        count = self.page.paginator.count
        size = self.page.paginator.per_page
        return Response({"count": count, "page": self.page.number, "pages": max(1, math.ceil(count / size)),
                         "page_size": size, "next": self.get_next_link(), "previous": self.get_previous_link(),
                         "results": data})

    def get_paginated_response_schema(self, schema: dict) -> dict:
        described = super().get_paginated_response_schema(schema)
        described["required"] = ["count", "page", "pages", "page_size", "results"]
        described["properties"] = {
            "count": {"type": "integer", "example": 123},
            "page": {"type": "integer", "example": 1},
            "pages": {"type": "integer", "example": 2},
            "page_size": {"type": "integer", "example": 100},
            **{k: v for k, v in described["properties"].items() if k != "count"},
        }
        return described

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size}
        return parameters


def list_responses(item: type[serializers.Serializer]) -> dict:
    """The schema of an ``APIView`` list that pages with `paginated` (the view sets ``pagination_class =
    Pagination``, so the schema shows the page shape and ``?page``/``?page_size``) and answers ``?format=csv``."""
    from drf_spectacular.types import OpenApiTypes

    return {(200, "application/json"): item(many=True), (200, "text/csv"): OpenApiTypes.STR}


def paginated(request, rows, serializer_class=None, *, view=None) -> Response:
    """An API view's list (a queryset or a list) as the one page shape, ``?page`` and ``?page_size`` honoured, the
    rows serialized by ``serializer_class`` when given. A view rendering CSV (``?format=csv``) gets every row."""
    def serialize(part):
        return serializer_class(part, many=True).data if serializer_class is not None else list(part)

    if _wants_csv(request):
        return Response(csv_rows(serialize(rows)))
    paginator = (getattr(view, "pagination_class", None) or Pagination)()  # a list's own sizes: a subclass
    return paginator.get_paginated_response(serialize(paginator.paginate_queryset(rows, request, view=view)))


def _wants_csv(request) -> bool:
    return getattr(getattr(request, "accepted_renderer", None), "format", None) == "csv"


def csv_rows(rows) -> list:
    """Rows for the CSV renderer: a nested value (an object, a list) becomes one JSON cell."""
    return [{key: json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else value
             for key, value in row.items()} if isinstance(row, dict) else row for row in rows]


class CsvListMixin:
    """For a ``ListAPIView`` whose list is exportable: ``?format=csv`` answers every filtered row (not a page), nested
    values as JSON cells; JSON stays the one page shape."""

    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]

    def list(self, request, *args, **kwargs):
        if not _wants_csv(request):
            return super().list(request, *args, **kwargs)
        rows = self.get_serializer(self.filter_queryset(self.get_queryset()), many=True).data
        return Response(csv_rows(rows))
