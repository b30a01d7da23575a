"""core.form_input: a page's form checks an API body (partial updates, unknown keys and nested values refused by
name), and the schema's serializer is made from the same fields."""
import pytest
from django import forms
from rest_framework import serializers

from core.form_input import form_input, form_serializer


class _Form(forms.Form):
    """A form with every kind of field the pages use."""

    name = forms.CharField(max_length=5, label="Name")
    note = forms.CharField(required=False, max_length=50)
    on = forms.BooleanField(required=False)
    n = forms.IntegerField(min_value=1, max_value=9)
    share = forms.FloatField(min_value=0, max_value=1, required=False)
    kind = forms.ChoiceField(choices=[("a", "A"), ("b", "B")])


def _refusal(data, **kw) -> dict:
    with pytest.raises(serializers.ValidationError) as caught:
        form_input(_Form, data, **kw)
    return caught.value.detail


def test_a_body_is_checked_by_the_form_with_its_own_messages():
    assert form_input(_Form, {"name": "ab", "on": True, "n": 3, "kind": "b"}) == {
        "name": "ab", "note": "", "on": True, "n": 3, "share": None, "kind": "b"}
    page = _Form({"name": "toolong", "n": 10, "kind": "c"})
    refused = _refusal({"name": "toolong", "n": 10, "kind": "c"})
    assert {k: [str(m) for m in v] for k, v in refused.items()} == {k: list(v) for k, v in page.errors.items()}


def test_partial_updates_keep_what_the_body_leaves_out_and_false_stays_false():
    current = {"name": "ab", "note": "kept", "on": True, "n": 3, "share": 0.5, "kind": "a"}
    assert form_input(_Form, {"on": False}, current=current) == {**current, "on": False}
    assert form_input(_Form, {"note": None}, current=current)["note"] == ""  # null empties the field, as on the page


def test_unknown_keys_and_nested_values_are_refused_by_name():
    refused = _refusal({"name": "ab", "n": 1, "kind": "a", "colour": "red", "note": {"x": 1}})
    assert set(refused) == {"colour", "note"} and "not a field of this request" in str(refused["colour"][0])
    assert "one value" in str(refused["note"][0])
    assert "JSON object" in str(_refusal(["a"])["non_field_errors"][0])


def test_the_schema_serializer_has_the_forms_fields_and_limits():
    fields = form_serializer(_Form)().fields
    assert list(fields) == list(_Form.base_fields)
    assert fields["name"].max_length == 5 and fields["name"].required and fields["name"].help_text == "Name"
    assert not fields["note"].required and fields["note"].allow_blank
    assert (fields["n"].min_value, fields["n"].max_value) == (1, 9) and isinstance(fields["n"], serializers.IntegerField)
    assert isinstance(fields["share"], serializers.FloatField) and isinstance(fields["on"], serializers.BooleanField)
    assert list(fields["kind"].choices) == ["a", "b"]
    assert form_serializer(_Form).__name__ == "_" and form_serializer(_Form, name="X").__name__ == "X"
