"""A page's form as an API endpoint's input: the same fields, ranges, defaults and messages for both, so a rule
is declared once (the form) and a refusal reads the same on the page and in the API.

- ``form_input(FormClass, request.data, current=...)`` validates a request body with the form and returns its
  ``cleaned_data``, or raises DRF's ``ValidationError`` with the form's errors by field (a 400 naming each field).
  ``current`` (the object's values now) makes it a partial update: fields the body leaves out keep them. A key
  the form does not have, or an object or list where the form expects one value, is refused by name, never
  ignored.
- ``form_serializer(FormClass)`` is the serializer the OpenAPI schema shows for that input (schema only), made
  from the form's fields, so the description cannot drift from what is checked.
"""
from __future__ import annotations

from django import forms
from rest_framework import serializers

_SIMPLE = (str, int, float, bool, type(None))


def form_input(form_class: type[forms.Form], data, *, current: dict | None = None) -> dict:
    fields = form_class.base_fields
    body = dict(data.items()) if hasattr(data, "items") else None
    if body is None:
        raise serializers.ValidationError({"non_field_errors": ["The request body must be a JSON object."]})
    problems = {name: [f"not a field of this request; the fields are: {', '.join(fields)}."]
                for name in body if name not in fields}
    problems.update({name: ["must be one value, not an object or a list."] for name, value in body.items()
                     if name in fields and not isinstance(value, _SIMPLE)})
    if problems:
        raise serializers.ValidationError(problems)
    merged = {**(current or {}), **body}  # null is an empty field, as on the page (its default, or none)
    form = form_class(data={name: "" if value is None else value for name, value in merged.items()})
    if not form.is_valid():
        raise serializers.ValidationError({field: list(errors) for field, errors in form.errors.items()})
    return form.cleaned_data


def _serializer_field(field: forms.Field) -> serializers.Field:
    common = {"required": field.required, "help_text": str(field.label or "")}
    if not field.required:
        common["allow_null"] = True
    if isinstance(field, forms.BooleanField):
        return serializers.BooleanField(**{**common, "required": False})
    if isinstance(field, forms.ChoiceField):
        return serializers.ChoiceField(choices=field.choices, **common)
    if isinstance(field, forms.IntegerField):  # Django's FloatField is an IntegerField subclass
        kind = serializers.FloatField if isinstance(field, forms.FloatField) else serializers.IntegerField
        return kind(min_value=field.min_value, max_value=field.max_value, **common)
    if isinstance(field, forms.CharField):
        return serializers.CharField(max_length=field.max_length, allow_blank=not field.required, **common)
    raise TypeError(f"form_serializer: no API field for {type(field).__name__}")


def form_serializer(form_class: type[forms.Form], *, name: str | None = None) -> type[serializers.Serializer]:
    """A serializer class with the form's fields (for ``extend_schema(request=...)``); ``name`` defaults to the
    form's name without "Form"."""
    name = name or form_class.__name__.removesuffix("Form")
    attrs = {field_name: _serializer_field(field) for field_name, field in form_class.base_fields.items()}
    attrs["__doc__"] = (form_class.__doc__ or "").strip() or None
    attrs["__module__"] = form_class.__module__
    return type(name, (serializers.Serializer,), attrs)
