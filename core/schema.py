"""Describing API answers in the OpenAPI schema (drf-spectacular) when some of their keys are named at run time.

A stored report carries `recall@10`, `mrr@100`, … for whatever cut-offs the run was given: an ordinary serializer
cannot list those. `OpenEndedSerializer` describes the keys it declares like any serializer and, in the schema,
says what every other key holds (`extra_values`, a JSON schema; default: numbers or null). Its extension below is
registered with drf-spectacular when this module loads, which every API module using it does."""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers


class OpenEndedSerializer(serializers.Serializer):
    """A response object: the declared fields, plus keys named at run time whose values `extra_values` describes
    (`extra_help` says which keys they are)."""

    extra_values: dict = {"type": "number", "nullable": True}
    extra_help: str = ""


class OpenEndedSerializerExtension(OpenApiSerializerExtension):
    target_class = OpenEndedSerializer
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        extra = dict(self.target.extra_values)
        if self.target.extra_help:
            extra["description"] = self.target.extra_help
        schema["additionalProperties"] = extra
        return schema
