"""Page forms of the annotation app: the request's shape (types, ranges, defaults) is checked here; the rules
(unique names, overlap ≤ set size, who may do what) stay in the services."""
from __future__ import annotations

from django import forms

from annotation.models import Project


def form_errors(form: forms.Form) -> str:
    """One line naming each field and its problem, for a page message."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


class ProjectCreateForm(forms.Form):
    name = forms.CharField(max_length=100)
    title = forms.CharField(max_length=200, required=False)
    set_size = forms.IntegerField(min_value=1, max_value=32767, required=False)
    overlap_per_set = forms.IntegerField(min_value=0, max_value=32767, required=False)
    overlap_mode = forms.ChoiceField(choices=Project.OverlapMode.choices, required=False)
    session_minutes = forms.IntegerField(min_value=0, max_value=32767, required=False)
    instructions = forms.CharField(required=False)

    def clean(self):
        data = super().clean()
        defaults = {"set_size": 10, "overlap_per_set": 3, "overlap_mode": Project.OverlapMode.INTER,
                    "instructions": Project._meta.get_field("instructions").default}
        for key, default in defaults.items():
            if data.get(key) in (None, ""):
                data[key] = default
        return data


class PlanningForm(forms.Form):
    """The simulation behind the planning page (``annotation.plan`` job)."""

    n_items = forms.IntegerField(min_value=3, max_value=300, initial=99, required=False, label="candidates")
    strengths_sd = forms.FloatField(min_value=0, initial=1.5, required=False, label="spread")
    noise = forms.FloatField(min_value=0, initial=1.0, required=False)
    n_annotators = forms.IntegerField(min_value=2, max_value=100, initial=11, required=False, label="annotators")
    target = forms.FloatField(min_value=0, max_value=1.0, initial=0.95, required=False)
    n_reps = forms.IntegerField(min_value=1, max_value=20, initial=3, required=False, label="repetitions")

    def clean(self):
        data = super().clean()
        for name, field in self.fields.items():
            if data.get(name) is None and name not in self.errors:
                data[name] = field.initial
        for name in ("strengths_sd", "noise", "target"):  # finite (FloatField) and strictly positive
            if name not in self.errors and not data[name] > 0:
                self.add_error(name, "must be greater than 0.")
        return data
