"""Page forms of the annotation app: the request's shape (types, ranges, defaults) is checked here; the rules
(unique names, overlap ≤ set size, who may do what) stay in the services."""
from __future__ import annotations

from django import forms

from annotation.models import Batch, Membership, Project, StudyItem, Verse


def form_errors(form: forms.Form) -> str:
    """One line naming each field and its problem, for a page message."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


def _initial_where_empty(form: forms.Form, data: dict, names=None) -> None:
    """Give each optional field left empty (and not in error) its ``initial`` value."""
    for name in names or form.fields:
        if data.get(name) is None and name not in form.errors:
            data[name] = form.fields[name].initial


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
    # the top-k stop rule to simulate before setting it (the project's settings of the same names)
    stop_top_k = forms.IntegerField(min_value=1, max_value=299, initial=10, required=False, label="top k")
    stop_recall = forms.FloatField(min_value=0.01, max_value=1, initial=0.9, required=False, label="share right")
    stop_margin = forms.FloatField(min_value=0, max_value=100, initial=0.5, required=False, label="tie margin")
    stop_level = forms.FloatField(min_value=0.5, max_value=0.999, initial=0.95, required=False, label="probability")
    stop_runs = forms.IntegerField(min_value=0, max_value=50, initial=0, required=False, label="stop-rule batches")

    def clean(self):
        data = super().clean()
        _initial_where_empty(self, data)
        for name in ("strengths_sd", "noise", "target"):  # finite (FloatField) and strictly positive
            if name not in self.errors and not data[name] > 0:
                self.add_error(name, "must be greater than 0.")
        return data


class ProjectSettingsForm(forms.Form):
    """A project's settings and instructions (the project page's settings card). Empty instructions mean the
    default text; an empty break reminder means none; the services check overlap ≤ set size."""

    title = forms.CharField(max_length=200, required=False, label="Title")
    overlap_mode = forms.ChoiceField(choices=Project.OverlapMode.choices, required=False, label="Overlap mode")
    set_size = forms.IntegerField(min_value=1, max_value=32767, label="Pairs per set")
    overlap_per_set = forms.IntegerField(min_value=0, max_value=32767, label="Overlap pairs per set")
    session_minutes = forms.IntegerField(min_value=1, max_value=32767, required=False, label="Break reminder")
    set_timeout_minutes = forms.IntegerField(min_value=1, max_value=32767, label="Release an abandoned set after")
    attention_per_set = forms.IntegerField(min_value=0, max_value=20, required=False, initial=0,
                                           label="Attention checks per set")
    instructions = forms.CharField(required=False, label="Instructions")
    adaptive_explore_share = forms.FloatField(min_value=0, max_value=1, required=False, initial=0.2,
                                              label="Adaptive mode: share of random pairs")
    stop_top_k = forms.IntegerField(min_value=1, max_value=10_000, required=False,
                                    label="Adaptive mode: stop once the top k are settled, k")
    stop_recall = forms.FloatField(min_value=0.01, max_value=1, required=False, initial=0.9,
                                   label="Adaptive mode: share of the top k that must be right")
    stop_margin = forms.FloatField(min_value=0, max_value=100, required=False, initial=0.5,
                                   label="Adaptive mode: strengths closer than this are ties")
    stop_level = forms.FloatField(min_value=0.5, max_value=0.999, required=False, initial=0.95,
                                  label="Adaptive mode: posterior probability asked for")
    stop_budget = forms.IntegerField(min_value=1, max_value=10_000_000, required=False,
                                     label="Adaptive mode: stop after judgements per batch")

    @classmethod
    def for_project(cls, project: Project) -> ProjectSettingsForm:
        """The unbound form showing the project's current values."""
        return cls(initial={name: getattr(project, name) for name in cls.base_fields})

    def clean(self):
        data = super().clean()
        if not data.get("overlap_mode"):
            data["overlap_mode"] = Project.OverlapMode.INTER
        _initial_where_empty(self, data, ["attention_per_set", "adaptive_explore_share", "stop_recall", "stop_margin",
                                          "stop_level"])
        if not data.get("instructions") and "instructions" not in self.errors:
            data["instructions"] = Project._meta.get_field("instructions").default
        return data


class MemberAddForm(forms.Form):
    """Add someone who has an account already (the service checks they hold the role)."""

    username = forms.CharField(max_length=150, label="Username")
    role = forms.ChoiceField(choices=Membership.Role.choices, required=False, label="Role")

    def clean_role(self):
        return self.cleaned_data["role"] or Membership.Role.ANNOTATOR


class AccountCreateForm(forms.Form):
    """A new annotator account made by the lead (the service checks the username's characters and the password
    against the site's password validators)."""

    username = forms.CharField(max_length=150, label="Username")
    password = forms.CharField(max_length=128, strip=False, label="Password")


class InvitationForm(forms.Form):
    """An invitation link: how long it is valid and how many people may use it (empty: the defaults)."""

    days = forms.IntegerField(min_value=1, max_value=90, required=False, initial=14, label="Valid for (days)")
    max_uses = forms.IntegerField(min_value=1, max_value=100, required=False, initial=1,
                                  label="People who may use it")

    def clean(self):
        data = super().clean()
        _initial_where_empty(self, data)
        return data


class InvitationAcceptForm(forms.Form):
    """The account someone without one creates on an invitation page."""

    username = forms.CharField(max_length=150, label="Username")
    password = forms.CharField(max_length=128, strip=False, label="Password")


_VERSE_ID_MAX = Verse._meta.get_field("verse_id").max_length


class BatchCreateForm(forms.Form):
    """A batch: one reference verse and its candidates, typed one per line or comma-separated (or every other
    verse of the project). ``cleaned_data["candidate_ids"]`` is a list without repeats; whether the ids are the
    project's verses is the service's check."""

    reference_id = forms.CharField(max_length=_VERSE_ID_MAX, label="Reference verse")
    candidate_ids = forms.CharField(required=False, label="Candidate verse ids")
    all_others = forms.BooleanField(required=False)
    name = forms.CharField(max_length=Batch._meta.get_field("name").max_length, required=False, label="Name")
    pilot = forms.BooleanField(required=False)

    def clean_candidate_ids(self) -> list[str]:
        raw = self.cleaned_data["candidate_ids"]
        ids = list(dict.fromkeys(part.strip() for part in raw.replace(",", "\n").splitlines() if part.strip()))
        too_long = [verse_id for verse_id in ids if len(verse_id) > _VERSE_ID_MAX]
        if too_long:
            raise forms.ValidationError(f"{len(too_long)} id(s) are longer than a verse id can be ({_VERSE_ID_MAX} "
                                        f"characters), e.g. {too_long[0][:20]!r}…")
        return ids

    def clean(self):
        data = super().clean()
        if not data.get("all_others") and "candidate_ids" not in self.errors and not data.get("candidate_ids"):
            self.add_error("candidate_ids", "Give the candidate verse ids or use all other verses.")
        return data


class BatchStatusForm(forms.Form):
    status = forms.ChoiceField(choices=Batch.Status.choices, label="Status")


class BatchRenameForm(forms.Form):
    name = forms.CharField(max_length=200, label="New name")


class VerseImportForm(forms.Form):
    file = forms.FileField(label="File", error_messages={"required": "Choose a file to import."})
    create_batches = forms.BooleanField(required=False)


class AttentionCheckForm(forms.Form):
    """Either mark a known-answer pair (``answer_id`` against ``other_id``) or add ``build`` platform-built checks
    (empty: 5)."""

    answer_id = forms.CharField(max_length=_VERSE_ID_MAX, required=False, label="Known answer")
    other_id = forms.CharField(max_length=_VERSE_ID_MAX, required=False, label="Against verse id")
    build = forms.IntegerField(min_value=1, max_value=200, required=False, initial=5, label="Built checks")

    def clean(self):
        data = super().clean()
        if data.get("answer_id") and not data.get("other_id") and "other_id" not in self.errors:
            self.add_error("other_id", "Give the verse the answer is compared with.")
        _initial_where_empty(self, data, ["build"])
        return data


class StudySettingsForm(forms.Form):
    """The study set-up's switches (the services check that the pairs a switched-on step needs exist)."""

    consent_text = forms.CharField(required=False, max_length=20_000, label="Consent text")
    training_on = forms.BooleanField(required=False, label="Training on known-answer pairs")
    check_on = forms.BooleanField(required=False, label="Comprehension check")
    check_pass_share = forms.FloatField(min_value=0, max_value=1, required=False, initial=0.8,
                                        label="Share of check pairs right to pass")

    @classmethod
    def for_project(cls, project: Project) -> StudySettingsForm:
        return cls(initial={name: getattr(project, name) for name in cls.base_fields})

    def clean(self):
        data = super().clean()
        _initial_where_empty(self, data, ["check_pass_share"])
        if "check_pass_share" not in self.errors and not data["check_pass_share"] > 0:
            self.add_error("check_pass_share", "must be greater than 0.")
        return data


class StudyItemForm(forms.Form):
    """A known-answer pair for training or the comprehension check, by verse ids."""

    kind = forms.ChoiceField(choices=StudyItem.Kind.choices, label="Used for")
    reference_id = forms.CharField(max_length=_VERSE_ID_MAX, label="Reference verse id")
    answer_id = forms.CharField(max_length=_VERSE_ID_MAX, label="More similar verse id (the answer)")
    other_id = forms.CharField(max_length=_VERSE_ID_MAX, label="Less similar verse id")
    explanation = forms.CharField(required=False, max_length=5_000, label="Why (shown after a training answer)")


class StudyGoldForm(forms.Form):
    """Pairs drawn from the batches' imported gold scores."""

    kind = forms.ChoiceField(choices=StudyItem.Kind.choices, label="Used for")
    n = forms.IntegerField(min_value=1, max_value=100, label="How many")
    min_gap = forms.FloatField(min_value=0, required=False, initial=0.5, label="Smallest gold-score difference")

    def clean(self):
        data = super().clean()
        _initial_where_empty(self, data, ["min_gap"])
        return data


class ProjectRenameForm(forms.Form):
    name = forms.CharField(max_length=100, label="Name (letters, digits, - and _)")
    title = forms.CharField(max_length=200, required=False, label="Title")


class VerseRenameForm(forms.Form):
    verse_id = forms.CharField(max_length=_VERSE_ID_MAX, label="New verse id")
