"""The API's JSON parser: DRF's, with a nesting limit (settings.SIMILIA_JSON_MAX_DEPTH) and no NUL."""
from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding
from rest_framework.utils import json as drf_json

from core import safejson


class DepthLimitedJSONParser(JSONParser):
    """400 "JSON nested too deeply" instead of a RecursionError (a 500) deep in the stack."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        max_depth = getattr(settings, "SIMILIA_JSON_MAX_DEPTH", safejson.DEFAULT_MAX_DEPTH)
        try:
            text = codecs.getreader(encoding)(stream).read()
            data = safejson.loads(text, max_depth=max_depth,
                                  parse_constant=drf_json.strict_constant if self.strict else None)
        except safejson.JSONTooDeep as exc:
            raise ParseError(str(exc)) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if safejson.contains_nul(data):
            raise ParseError("A NUL character (\\u0000) in the JSON body; no field accepts one.")
        return data
