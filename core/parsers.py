"""The API's readers of JSON, each through the one guarded reader (`core.safejson`: a nesting limit,
settings.SIMILIA_JSON_MAX_DEPTH, numbers within a 64-bit column and a finite float, strings without NUL or a lone
surrogate): DRF's JSON parser for `application/json` bodies, and `JSONField` for a JSON field of any body (a
form-encoded or multipart field is a JSON text that DRF's own field hands to `json.loads`, which let a RecursionError
or a 10**309 through)."""
from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

from core import safejson


def _max_depth() -> int:
    return getattr(settings, "SIMILIA_JSON_MAX_DEPTH", safejson.DEFAULT_MAX_DEPTH)


class DepthLimitedJSONParser(JSONParser):
    """400 with the reader's sentence instead of a RecursionError or an OverflowError (a 500) deep in the stack."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        try:
            data = safejson.loads(codecs.getreader(encoding)(stream).read(), max_depth=_max_depth())
        except safejson.JSONRefused as exc:
            field, _, rest = exc.path.partition(".")
            if field and "[" not in field:  # a field's number: refused under the field's name, as a field's error
                raise serializers.ValidationError({field: [f"{rest}: {exc}" if rest else str(exc)]}) from None
            raise ParseError(f"{exc.path}: {exc}" if exc.path else str(exc)) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        return data


class JSONField(serializers.JSONField):
    """DRF's JSONField read through `core.safejson` whatever the body's encoding; every input serializer's JSON field."""

    def to_internal_value(self, data):
        try:
            if getattr(data, "is_json_string", False):  # a form-encoded or multipart field: JSON text
                data = safejson.loads(str(data), max_depth=_max_depth())
            else:
                safejson.check(data, max_depth=_max_depth())
        except safejson.JSONRefused as exc:
            raise serializers.ValidationError(f"{exc.path}: {exc}" if exc.path else str(exc)) from None
        except ValueError as exc:
            raise serializers.ValidationError(f"not valid JSON: {exc}") from None
        return super().to_internal_value(data)
