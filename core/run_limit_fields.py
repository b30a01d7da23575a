"""The Django side of :mod:`core.run_limits`: a run limit as a page form's field and as an API serializer's field,
with the limit's one message for every refusal (a number out of range, not a number, too long)."""
from __future__ import annotations

from django import forms
from rest_framework import serializers

from core.run_limits import IntLimit


def _messages(limit: IntLimit) -> dict:
    return {"min_value": limit.message, "max_value": limit.message, "invalid": limit.message,
            "max_string_length": limit.message}


def form_field(limit: IntLimit, **extra) -> forms.IntegerField:
    return forms.IntegerField(min_value=limit.low, max_value=limit.high, required=limit.default is not None,
                              initial=limit.default, help_text=limit.help, error_messages=_messages(limit), **extra)


def serializer_field(limit: IntLimit) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=limit.low, max_value=limit.high, required=False, default=limit.default,
                                    allow_null=limit.default is None, help_text=limit.help,
                                    error_messages=_messages(limit))
