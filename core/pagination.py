"""The one pagination of every API list: `?page=N&page_size=M` (M from 1 to `MAX_PAGE_SIZE`, default the
`PAGE_SIZE` setting), answered as `{"count", "page", "pages", "page_size", "next", "previous", "results"}`.
A bad `page_size` is a 400 naming it (core.params), never a silent clamp."""
from __future__ import annotations

import math

from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from core.params import query_int

MAX_PAGE_SIZE = 1000


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def get_page_size(self, request) -> int:
        return query_int(request.query_params, self.page_size_query_param, default=self.page_size, min_value=1,
                         max_value=self.max_page_size)

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
