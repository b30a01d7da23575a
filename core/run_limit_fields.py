"""The Django side of :mod:`core.run_limits`: a run limit as a page form's field and as an API serializer's field,
with the limit's one message for every refusal (a number out of range, not a number, too long, a name not in the
list)."""
from __future__ import annotations

from django import forms
from rest_framework import serializers

from core.run_limits import ChoiceLimit, IntLimit


def _messages(limit: IntLimit) -> dict:
    return {"min_value": limit.message, "max_value": limit.message, "invalid": limit.message,
            "max_string_length": limit.message}


class _LimitChoiceField(forms.ChoiceField):
    """A page's choice checked by its limit (the message the API and the command give)."""

    def __init__(self, limit: ChoiceLimit, **kwargs):
        self.limit = limit
        super().__init__(choices=list(limit.choices), **kwargs)

    def to_python(self, value):
        return super().to_python(value) or self.limit.default

    def validate(self, value):
        self.limit.check(value, forms.ValidationError)


class _LimitChoiceSerializerField(serializers.ChoiceField):
    def __init__(self, limit: ChoiceLimit, **kwargs):
        self.limit = limit
        super().__init__(choices=list(limit.choices), **kwargs)

    def to_internal_value(self, data):
        return self.limit.check(data, serializers.ValidationError)


def form_field(limit: IntLimit | ChoiceLimit, **extra) -> forms.Field:
    if isinstance(limit, ChoiceLimit):
        return _LimitChoiceField(limit, required=False, initial=limit.default, help_text=limit.help, **extra)
    return forms.IntegerField(min_value=limit.low, max_value=limit.high, required=limit.default is not None,
                              initial=limit.default, help_text=limit.help, error_messages=_messages(limit), **extra)


def serializer_field(limit: IntLimit | ChoiceLimit) -> serializers.Field:
    if isinstance(limit, ChoiceLimit):
        return _LimitChoiceSerializerField(limit, required=False, default=limit.default, help_text=limit.help)
    return serializers.IntegerField(min_value=limit.low, max_value=limit.high, required=False, default=limit.default,
                                    allow_null=limit.default is None, help_text=limit.help,
                                    error_messages=_messages(limit))
