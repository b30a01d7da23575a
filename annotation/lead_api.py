"""The lead's housekeeping and study set-up over the API: what the project page, the verse pages and the study card
do, through the same services (`services/curation.py`, `services/projects.py`, `services/study.py`) and the same
page forms as input (`core.form_input`: one declaration of each field's rules, the form's messages).

Only the project's leads (and staff) may call any of it; to anyone else a project, batch, verse or study pair
answers 404 as a missing one would (`selectors.managed_or_missing`). Every deletion has a plan endpoint
(`…/delete-plan/`, and `…/archive-plan/` for a project) answering what the confirmation page shows: what goes,
what is kept, and why it is refused when it is (then the deletion answers 409 with that reason)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.api import ProjectOutputSerializer, VerseSerializer
from annotation.forms import (
    ProjectRenameForm,
    StudyGoldForm,
    StudyItemForm,
    StudySettingsForm,
    VerseRenameForm,
)
from annotation.models import Batch, Project, StudyItem, Verse
from annotation.services import curation
from annotation.services import study as study_services
from core.action_answers import DoneSerializer, PlanSerializer, done, plan_answer
from core.form_input import form_input, form_serializer
from core.pagination import Pagination, list_responses, paginated
from core.renderers import CSVRenderer


def _project(request, pk: int) -> Project:
    return selectors.managed_or_missing(Project.objects.select_related("owner"), pk=pk, user=request.user,
                                        project_of=lambda project: project)


def _batch(request, pk: int) -> Batch:
    return selectors.managed_or_missing(Batch.objects.select_related("project", "reference"), pk=pk, user=request.user)


def _verse(request, pk: int) -> Verse:
    return selectors.managed_or_missing(Verse.objects.select_related("project"), pk=pk, user=request.user)


class LeadApi(APIView):
    permission_classes = [IsAuthenticated]


# --- projects -------------------------------------------------------------------------------------

class ProjectRenameApi(LeadApi):
    """A new name (letters, digits, - and _; unique) and/or title (a field left out keeps its value). The project's
    id, batches, judgements and exports follow it."""

    @extend_schema(request=form_serializer(ProjectRenameForm, name="ProjectRenameInput"),
                   responses=ProjectOutputSerializer)
    def post(self, request, pk: int):
        project = _project(request, pk)
        data = form_input(ProjectRenameForm, request.data, current={"name": project.name, "title": project.title})
        return Response(ProjectOutputSerializer(curation.project_rename(project=project, actor=request.user,
                                                                        **data)).data)


class ProjectArchivePlanApi(LeadApi):
    """What archiving (or unarchiving) the project does and keeps, as its confirmation page says it."""

    @extend_schema(responses=PlanSerializer)
    def get(self, request, pk: int):
        return plan_answer(curation.project_archive_plan(_project(request, pk)))


class ProjectArchiveApi(LeadApi):
    """Archive the project: no pairs are served, and choices in sets already on screen are refused; everything is
    kept and exports still work. No request body."""

    archived = True

    @extend_schema(request=None, responses=ProjectOutputSerializer)
    def post(self, request, pk: int):
        project = _project(request, pk)
        curation.project_archive(project=project, actor=request.user, archived=self.archived)
        return Response(ProjectOutputSerializer(project).data)


class ProjectUnarchiveApi(ProjectArchiveApi):
    """Make an archived project active again: its open batches serve pairs. No request body."""

    archived = False


class ProjectDeletePlanApi(LeadApi):
    """What deleting the project removes and keeps; `refused` says why it cannot be deleted (it holds judgements)."""

    @extend_schema(responses=PlanSerializer)
    def get(self, request, pk: int):
        return plan_answer(curation.project_delete_plan(_project(request, pk)))


# --- batches --------------------------------------------------------------------------------------

class BatchDeletePlanApi(LeadApi):
    """What deleting the batch removes and keeps; `refused` says why it cannot be deleted (it holds judgements)."""

    @extend_schema(responses=PlanSerializer)
    def get(self, request, pk: int):
        return plan_answer(curation.batch_delete_plan(_batch(request, pk)))



# --- verses ---------------------------------------------------------------------------------------

class VerseUsesSerializer(serializers.Serializer):
    reference_of = serializers.IntegerField(help_text="batches whose reference it is")
    candidate_in = serializers.IntegerField(help_text="batches it is a candidate of")
    attention_checks = serializers.IntegerField()
    study_pairs = serializers.IntegerField()


class VerseDetailSerializer(VerseSerializer):
    project = serializers.IntegerField(source="project_id")
    uses = serializers.SerializerMethodField(help_text="what uses the verse (a verse in use is not deleted)")

    class Meta(VerseSerializer.Meta):
        fields = [*VerseSerializer.Meta.fields, "project", "uses"]

    @extend_schema_field(VerseUsesSerializer)
    def get_uses(self, verse: Verse) -> dict:
        return {what.replace(" ", "_"): n for what, n in curation._verse_uses(verse).items()}


class VerseDetailApi(LeadApi):
    """A verse of a project the caller leads: read it with what uses it, rename it (a new verse id, unique in the
    project; batches, judgements and exports follow), delete it (refused while anything uses it)."""

    @extend_schema(responses=VerseDetailSerializer)
    def get(self, request, pk: int):
        return Response(VerseDetailSerializer(_verse(request, pk)).data)

    @extend_schema(request=form_serializer(VerseRenameForm, name="VerseRenameInput"), responses=VerseDetailSerializer)
    def patch(self, request, pk: int):
        verse = _verse(request, pk)
        data = form_input(VerseRenameForm, request.data, current={"verse_id": verse.verse_id})
        return Response(VerseDetailSerializer(curation.verse_rename(verse=verse, actor=request.user, **data)).data)

    @extend_schema(request=None, responses={200: DoneSerializer})
    def delete(self, request, pk: int):
        return done(curation.verse_delete(verse=_verse(request, pk), actor=request.user))


class VerseDeletePlanApi(LeadApi):
    """What deleting the verse removes and keeps; `refused` says what uses it when something does."""

    @extend_schema(responses=PlanSerializer)
    def get(self, request, pk: int):
        return plan_answer(curation.verse_delete_plan(_verse(request, pk)))


# --- the study set-up -----------------------------------------------------------------------------

_STUDY_FIELDS = list(StudySettingsForm.base_fields)


class StudySettingsOutputSerializer(serializers.Serializer):
    consent_text = serializers.CharField(allow_blank=True, help_text="empty: no consent step")
    training_on = serializers.BooleanField()
    check_on = serializers.BooleanField()
    check_pass_share = serializers.FloatField()
    instructions = serializers.CharField(allow_blank=True, help_text="shown before the first pair and while "
                                                                     "annotating; change it with PATCH projects/<id>/")
    n_training = serializers.IntegerField(help_text="training pairs")
    n_check = serializers.IntegerField(help_text="comprehension-check pairs")
    max_check_attempts = serializers.IntegerField(help_text="attempts at the check before an annotator gets no pairs")


def _study_settings(project: Project) -> dict:
    counts = {kind: project.study_items.filter(kind=kind).count() for kind in StudyItem.Kind.values}
    return {**{name: getattr(project, name) for name in _STUDY_FIELDS}, "instructions": project.instructions,
            "n_training": counts[StudyItem.Kind.TRAINING], "n_check": counts[StudyItem.Kind.CHECK],
            "max_check_attempts": study_services.MAX_CHECK_ATTEMPTS}


class StudySettingsApi(LeadApi):
    """The study set-up's switches: consent text (empty: no consent step), training on the training pairs, the
    comprehension check and the share right to pass it. PATCH changes the fields it names; a step cannot be
    turned on before it has pairs (400 naming the field)."""

    @extend_schema(responses=StudySettingsOutputSerializer)
    def get(self, request, pk: int):
        return Response(_study_settings(_project(request, pk)))

    @extend_schema(request=form_serializer(StudySettingsForm, name="StudySettingsInput"),
                   responses=StudySettingsOutputSerializer)
    def patch(self, request, pk: int):
        project = _project(request, pk)
        data = form_input(StudySettingsForm, request.data,
                          current={name: getattr(project, name) for name in _STUDY_FIELDS})
        project = study_services.study_settings_update(project=project, actor=request.user, **data)
        return Response(_study_settings(project))


class StudyItemSerializer(serializers.ModelSerializer):
    reference_id = serializers.CharField(source="reference.verse_id")
    answer_id = serializers.CharField(source="answer.verse_id", help_text="the more similar verse (the answer)")
    other_id = serializers.CharField(source="other.verse_id")

    class Meta:
        model = StudyItem
        fields = ["id", "kind", "reference_id", "answer_id", "other_id", "explanation", "source", "created"]


class StudyItemListApi(LeadApi):
    """The project's training and comprehension-check pairs; POST marks one (verse ids of the project; the answer
    is the verse more similar to the reference than the other)."""

    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    pagination_class = Pagination

    @extend_schema(responses=list_responses(StudyItemSerializer))
    def get(self, request, pk: int):
        project = _project(request, pk)
        items = project.study_items.select_related("reference", "answer", "other").order_by("kind", "id")
        return paginated(request, items, StudyItemSerializer, view=self)

    @extend_schema(request=form_serializer(StudyItemForm, name="StudyItemInput"), responses={201: StudyItemSerializer})
    def post(self, request, pk: int):
        project = _project(request, pk)
        item = study_services.study_item_add(project=project, actor=request.user,
                                             **form_input(StudyItemForm, request.data))
        return Response(StudyItemSerializer(item).data, status=status.HTTP_201_CREATED)


class StudyGoldOutputSerializer(serializers.Serializer):
    added = serializers.IntegerField(help_text="pairs drawn")


class StudyItemsFromGoldApi(LeadApi):
    """Draw up to ``n`` pairs from the batches' imported gold scores: candidate pairs whose gold similarities
    differ by at least ``min_gap``, the higher-scored one the answer."""

    @extend_schema(request=form_serializer(StudyGoldForm, name="StudyGoldInput"),
                   responses={201: StudyGoldOutputSerializer})
    def post(self, request, pk: int):
        project = _project(request, pk)
        added = study_services.study_items_from_gold(project=project, actor=request.user,
                                                     **form_input(StudyGoldForm, request.data))
        return Response({"added": added}, status=status.HTTP_201_CREATED)


class StudyItemDetailApi(LeadApi):
    """Remove a study pair (the answers annotators gave to it go with it; the last pair of a step that is on is
    refused)."""

    @extend_schema(request=None, responses={200: DoneSerializer})
    def delete(self, request, pk: int, item_id: int):
        project = _project(request, pk)
        return done(study_services.study_item_delete(project=project, actor=request.user, item_id=item_id))


class StudyAnnotatorSerializer(serializers.Serializer):
    """One annotator's standing in the study set-up (the dashboard's annotator table)."""

    username = serializers.CharField()
    user_id = serializers.IntegerField()
    consented_at = serializers.DateTimeField(allow_null=True)
    training_correct = serializers.IntegerField()
    training_answered = serializers.IntegerField()
    check_attempts = serializers.IntegerField()
    check_last_score = serializers.FloatField(allow_null=True)
    check_passed = serializers.BooleanField()
    study_step = serializers.CharField(help_text="consent, training, check, failed or done")
    failed = serializers.BooleanField(help_text="failed the comprehension check in every attempt allowed")


class StudyAnnotatorListApi(LeadApi):
    """Each annotator's standing in the study set-up: consent, training, check attempts and score, the step they are at."""

    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    pagination_class = Pagination

    @extend_schema(responses=list_responses(StudyAnnotatorSerializer))
    def get(self, request, pk: int):
        rows = study_services.study_rows(_project(request, pk))
        return paginated(request, [{"username": name, **row} for name, row in rows.items()], StudyAnnotatorSerializer,
                         view=self)


class StudyRetryApi(LeadApi):
    """Give an annotator who failed the comprehension check new attempts (their past answers are kept). No request
    body."""

    @extend_schema(request=None, responses=DoneSerializer)
    def post(self, request, pk: int, user_id: int):
        project = _project(request, pk)
        return done(study_services.check_allow_retry(project=project, actor=request.user, user_id=user_id))
