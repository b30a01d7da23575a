"""Annotation API: projects, members, verse import, batches, the annotator's sets and judgements."""
from __future__ import annotations

import uuid

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.models import AnnotationSet, Batch, Judgement, Membership, Project, Verse
from annotation.services import curation, scheduling
from annotation.services import judgements as judgement_services
from annotation.services import projects as project_services
from core.action_answers import DoneSerializer, done
from core.pagination import CsvListMixin, Pagination, list_responses, paginated
from core.permissions import IsAnnotator, IsLead
from core.renderers import CSVRenderer
from core.upload_limit import upload_refusal


def _project_for(request, pk: int, *, manage: bool = False) -> Project:
    return selectors.project_get_for(pk=pk, user=request.user, access="manage" if manage else "view")


# --- serializers ----------------------------------------------------------------------------------

_PROJECT_SETTINGS = ["title", "instructions", "set_size", "overlap_per_set", "overlap_mode", "session_minutes",
                     "set_timeout_minutes"]


class ProjectOutputSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)

    class Meta:
        model = Project
        fields = ["id", "name", "owner", *_PROJECT_SETTINGS, "archived_at", "created"]
        read_only_fields = fields


class ProjectInputSerializer(serializers.ModelSerializer):
    """A new project: its name and settings (the model's field rules apply; the owner is the caller)."""

    class Meta:
        model = Project
        fields = ["name", *_PROJECT_SETTINGS]


class ProjectUpdateInputSerializer(serializers.ModelSerializer):
    """A new name and/or settings of an existing project; fields left out keep their values. A new name follows the
    rename's rules and service (`curation.project_rename`, as POST `projects/<id>/rename/`): letters, digits, - and _,
    at most 100, unique (a taken name answers 409); the project's id, batches, judgements and exports follow it."""

    name = serializers.CharField(max_length=100, required=False, help_text=(
        "new name: 1 to 100 letters, digits, '-' or '_', unique among projects"))

    class Meta:
        model = Project
        fields = ["name", *_PROJECT_SETTINGS]

    def validate_name(self, value: str) -> str:
        problem = curation.project_name_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value.strip()


class MemberInputSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Membership.Role.choices, default=Membership.Role.ANNOTATOR)


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["username", "role", "created"]


class VerseSerializer(serializers.ModelSerializer):
    class Meta:
        model = Verse
        fields = ["id", "verse_id", "text", "translation", "occurrence_id", "verse_number", "type_id", "group_id",
                  "metadata"]


class VerseImportSerializer(serializers.Serializer):
    file = serializers.FileField()
    create_batches = serializers.BooleanField(default=True)


class VerseImportSummarySerializer(serializers.Serializer):
    """What `verses_import` answers (schema only)."""

    format = serializers.CharField(help_text="the file format recognised")
    created = serializers.IntegerField(help_text="verses added")
    unchanged = serializers.IntegerField(help_text="verses already in the project with the same text")
    batches = serializers.ListField(child=serializers.CharField(), help_text="names of the batches made from the file")
    batch_jobs = serializers.ListField(child=serializers.IntegerField(),
                                       help_text="jobs making the batches too large to make in the request")
    notes = serializers.ListField(child=serializers.CharField(), help_text="what was repaired while reading")


class BatchInputSerializer(serializers.Serializer):
    reference_id = serializers.CharField(help_text="DBBE-style verse id of the reference, e.g. '16977 1'")
    candidate_ids = serializers.ListField(child=serializers.CharField(), min_length=2)
    name = serializers.CharField(required=False, allow_blank=True, default="")
    pilot = serializers.BooleanField(default=False)


class BatchSerializer(serializers.ModelSerializer):
    reference_id = serializers.CharField(source="reference.verse_id")
    reference_text = serializers.CharField(source="reference.text")

    class Meta:
        model = Batch
        fields = ["id", "project", "name", "reference_id", "reference_text", "pilot", "status", "n_candidates",
                  "n_pairs", "created"]


class BatchJobSerializer(serializers.Serializer):
    job = serializers.IntegerField(help_text="the job creating the batch")
    status = serializers.CharField()
    detail = serializers.CharField()


class BatchUpdateSerializer(serializers.Serializer):
    """A new name (unique in the project) and/or status: closed takes no more judgements, open again serves
    pairs (the project page's rename and close buttons)."""

    name = serializers.CharField(required=False, help_text="1 to 200 characters, unique in the project")
    status = serializers.ChoiceField(choices=Batch.Status.choices, required=False)


class JudgementInputSerializer(serializers.Serializer):
    assignment_id = serializers.IntegerField()
    chosen_verse = serializers.IntegerField(help_text="database id of the chosen candidate verse")
    client_uuid = serializers.UUIDField(
        help_text="made by the client; a retried submit with it is stored once (409 after undo or with another choice)")
    response_ms = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=86_400_000,
                                           help_text="milliseconds from showing the pair to the choice (at most a day)")
    pair_id = serializers.IntegerField(
        required=False, allow_null=True,
        help_text="the pair the annotator saw; a choice for an assignment that shows another pair is refused (409)")


_RESPONSE_MS_MAX = JudgementInputSerializer().fields["response_ms"].max_value


def judgement_input(data) -> dict:
    """`JudgementInputSerializer(data=data)`'s validated data, 400 on bad input.

    A well-formed body (a JSON object whose fields already have their types: integers, a UUID string, a
    response time in range) is taken as it is here; anything else goes through the serializer, so every
    refusal is the serializer's own error body and every accepted value the same (tests compare them).
    The serializer's field set-up cost more CPU per choice than storing it."""
    if type(data) is dict:
        checked = _judgement_input_as_sent(data)
        if checked is not None:
            return checked
    serializer = JudgementInputSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _judgement_input_as_sent(data: dict) -> dict | None:
    assignment_id, chosen, client_uuid = data.get("assignment_id"), data.get("chosen_verse"), data.get("client_uuid")
    if type(assignment_id) is not int or type(chosen) is not int or type(client_uuid) is not str:
        return None  # bool is not int here: the serializer refuses it
    try:
        checked = {"assignment_id": assignment_id, "chosen_verse": chosen, "client_uuid": uuid.UUID(hex=client_uuid)}
    except ValueError:
        return None
    for name in ("response_ms", "pair_id"):
        if name in data:
            value = data[name]
            if value is not None and (type(value) is not int or (
                    name == "response_ms" and not 0 <= value <= _RESPONSE_MS_MAX)):
                return None
            checked[name] = value
    return checked


class UndoInputSerializer(serializers.Serializer):
    client_uuid = serializers.UUIDField(
        required=False, allow_null=True,
        help_text="the judgement to undo (must be the set's last live one); a retry returns it again. "
                  "Without it the set's last live judgement is undone.")


class JudgementSerializer(serializers.ModelSerializer):
    class Meta:
        model = Judgement
        fields = ["id", "assignment", "pair", "batch", "set", "chosen", "left", "chose_left", "response_ms",
                  "client_uuid", "created", "undone_at", "after_close"]


_DATETIME = serializers.DateTimeField()


def judgement_payload(judgement: Judgement) -> dict:
    """`JudgementSerializer(judgement).data`, built directly: the submit answers it on every choice, and the
    serializer's per-instance field set-up costs more than the rest of the response (tests compare the two)."""
    undone = judgement.undone_at
    return {"id": judgement.pk, "assignment": judgement.assignment_id, "pair": judgement.pair_id,
            "batch": judgement.batch_id, "set": judgement.set_id, "chosen": judgement.chosen_id,
            "left": judgement.left_id, "chose_left": judgement.chose_left, "response_ms": judgement.response_ms,
            "client_uuid": str(judgement.client_uuid), "created": _DATETIME.to_representation(judgement.created),
            "undone_at": None if undone is None else _DATETIME.to_representation(undone),
            "after_close": judgement.after_close}


def verse_payload(verse: Verse) -> dict:
    return {"id": verse.pk, "verse_id": verse.verse_id, "text": verse.text, "translation": verse.translation}


def set_payload(*, annotation_set: AnnotationSet | None, batch: Batch, user) -> dict:
    """The annotator page's view of a set; `done` when the batch has nothing left for the user."""
    project = batch.project
    if annotation_set is None:
        items, progress = None, selectors.batch_progress_for(batch=batch, user=user)
    else:  # one statement; the verses as verse_payload gives them
        items, progress = selectors.set_items_and_progress(annotation_set=annotation_set, batch=batch, user=user)
    body = {
        "batch": {"id": batch.pk, "name": batch.name, "pilot": batch.pilot},
        "reference": verse_payload(batch.reference),
        "instructions": project.instructions,
        "session_minutes": project.session_minutes,
        "progress": progress,
        "done": annotation_set is None,
    }
    if annotation_set is not None:
        body["set"] = {"id": annotation_set.pk, "status": annotation_set.status,
                       "expires_at": annotation_set.expires_at, "items": items}
    return body


# --- projects -----------------------------------------------------------------------------------

class ProjectListApi(ListAPIView):
    serializer_class = ProjectOutputSerializer
    permission_classes = [IsAuthenticated]
    queryset = Project.objects.none()  # the model, for the schema (which has no user): get_queryset answers requests

    def get_queryset(self):
        return selectors.projects_for_user(user=self.request.user).order_by("name")

    @extend_schema(request=ProjectInputSerializer, responses={201: ProjectOutputSerializer})
    def post(self, request):
        serializer = ProjectInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        project = project_services.project_create(owner=request.user, **serializer.validated_data)
        return Response(ProjectOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ProjectOutputSerializer)
    def get(self, request, pk: int):
        return Response(ProjectOutputSerializer(_project_for(request, pk)).data)

    @extend_schema(request=ProjectUpdateInputSerializer, responses=ProjectOutputSerializer)
    def patch(self, request, pk: int):
        """Rename the project and/or change its settings (the project's leads; a member who may only read it gets
        403). A new name goes through the rename service; all of it is saved or none."""
        project = _project_for(request, pk, manage=True)
        serializer = ProjectUpdateInputSerializer(project, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        name = data.pop("name", None)
        with transaction.atomic():
            if data:
                project = project_services.project_update(project=project, **data)
            if name is not None:
                project = curation.project_rename(project=project, actor=request.user, name=name,
                                                  title=project.title)
        return Response(ProjectOutputSerializer(project).data)

    @extend_schema(request=None, responses={200: DoneSerializer})
    def delete(self, request, pk: int):
        """Delete a project without judgements, with its batches, verses, study set-up and invitations (accounts,
        job records and gold sets made from it stay); one with judgements is refused (409: archive it instead).
        The project's leads only (to others it answers 404 like a missing one). What goes:
        `projects/<id>/delete-plan/`."""
        project = selectors.managed_or_missing(Project.objects.all(), pk=pk, user=request.user,
                                               project_of=lambda project: project)
        return done(curation.project_delete(project=project, actor=request.user))


class MemberApi(APIView):
    permission_classes = [IsLead]
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    pagination_class = Pagination

    @extend_schema(responses=list_responses(MembershipSerializer))
    def get(self, request, pk: int):
        project = _project_for(request, pk, manage=True)
        return paginated(request, project.memberships.select_related("user").order_by("id"), MembershipSerializer,
                         view=self)

    @extend_schema(request=MemberInputSerializer, responses={201: MembershipSerializer})
    def post(self, request, pk: int):
        project = _project_for(request, pk, manage=True)
        serializer = MemberInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = project_services.membership_add(project=project, **serializer.validated_data)
        return Response(MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)


class VerseListApi(CsvListMixin, ListAPIView):
    serializer_class = VerseSerializer
    permission_classes = [IsAuthenticated]
    queryset = Verse.objects.none()  # the model, for the schema (which has no project): get_queryset answers requests

    def get_queryset(self):
        return selectors.verses_of(project=_project_for(self.request, self.kwargs["pk"]))


class VersePickSerializer(serializers.ModelSerializer):
    """A verse as the batch form's picker lists it: its database id, its id and its text."""

    class Meta:
        model = Verse
        fields = ["id", "verse_id", "text"]


class VerseSearchApi(ListAPIView):
    """The project's verses whose id or text contains `q` (case-insensitive), ids beginning with it first; every
    verse when `q` is empty. For the project's leads (the batch form's verse picker)."""

    serializer_class = VersePickSerializer
    permission_classes = [IsLead]
    queryset = Verse.objects.none()  # the model, for the schema (which has no project): get_queryset answers requests

    @extend_schema(parameters=[OpenApiParameter("q", OpenApiTypes.STR, description="part of a verse id or text "
                                                                                      "(at most 200 characters)")])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        project = _project_for(self.request, self.kwargs["pk"], manage=True)
        q = self.request.query_params.get("q", "")
        if len(q) > 200:
            raise serializers.ValidationError({"q": "at most 200 characters."})
        return selectors.verse_search(project=project, q=q)


class VerseImportApi(APIView):
    permission_classes = [IsLead]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": VerseImportSerializer}, responses={201: VerseImportSummarySerializer})
    def post(self, request, pk: int):
        project = _project_for(request, pk, manage=True)
        refused = upload_refusal(request)
        if refused:
            return Response({"detail": refused}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        serializer = VerseImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        project_services.check_upload_size(size=upload.size, filename=upload.name)
        summary = project_services.verses_import(
            project=project, data=upload.read(), filename=upload.name,
            create_batches=serializer.validated_data["create_batches"], owner=request.user,
        )
        return Response(summary, status=status.HTTP_201_CREATED)


class BatchListApi(APIView):
    permission_classes = [IsAuthenticated]
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    pagination_class = Pagination

    @extend_schema(responses=list_responses(BatchSerializer))
    def get(self, request, pk: int):
        project = _project_for(request, pk)
        return paginated(request, project.batches.select_related("reference"), BatchSerializer, view=self)

    @extend_schema(request=BatchInputSerializer, responses={201: BatchSerializer, 202: BatchJobSerializer})
    def post(self, request, pk: int):
        """201 with the batch; 202 with a job id when the batch is large enough to be made by a job
        (above SIMILIA_BATCH_JOB_PAIRS pairs): follow `/api/v1/jobs/<job>/`, whose result names the batch."""
        project = _project_for(request, pk, manage=True)
        serializer = BatchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        made = project_services.batch_create_or_job(project=project, owner=request.user, **serializer.validated_data)
        if not isinstance(made, Batch):
            from jobs.services import job_enqueue_error

            failed = job_enqueue_error(made)
            if failed:
                return Response({"job": made.pk, "detail": failed}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
            return Response({"job": made.pk, "status": made.status,
                             "detail": "The batch is being created by a job; it opens when its pairs are written."},
                            status=status.HTTP_202_ACCEPTED)
        return Response(BatchSerializer(made).data, status=status.HTTP_201_CREATED)


class BatchDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=BatchSerializer)
    def get(self, request, pk: int):
        batch = get_object_or_404(Batch.objects.select_related("reference", "project"), pk=pk)
        _project_for(request, batch.project_id)
        return Response(BatchSerializer(batch).data)

    @extend_schema(request=BatchUpdateSerializer, responses=BatchSerializer)
    def patch(self, request, pk: int):
        """Rename, close or reopen (the project's leads; to others the batch answers 404 like a missing one)."""
        batch = _managed_batch(request, pk)
        serializer = BatchUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if "name" in data:
            batch = project_services.batch_rename(batch=batch, name=data["name"])
        if "status" in data:
            batch = project_services.batch_set_status(batch=batch, status=data["status"])
        return Response(BatchSerializer(batch).data)

    @extend_schema(request=None, responses={200: DoneSerializer})
    def delete(self, request, pk: int):
        """Delete a batch without judgements, with its pairs and unanswered sets (its verses stay); one with
        judgements is refused (409: close it instead). What goes: `batches/<id>/delete-plan/`."""
        return done(project_services.batch_delete(batch=_managed_batch(request, pk)))


def _managed_batch(request, pk: int) -> Batch:
    return selectors.managed_or_missing(Batch.objects.select_related("reference", "project"), pk=pk,
                                        user=request.user)


class BatchProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    reference_id = serializers.CharField()
    reference_text = serializers.CharField()
    pilot = serializers.BooleanField()
    status = serializers.CharField()
    n_candidates = serializers.IntegerField()
    n_pairs = serializers.IntegerField()
    judgements = serializers.IntegerField(help_text="live judgements (attention checks left out)")
    pairs_covered = serializers.IntegerField(help_text="pairs judged at least once")
    pairs_progress = serializers.FloatField(help_text="pairs_covered / n_pairs")
    planned_judgements = serializers.IntegerField()


class AnnotatorProgressSerializer(serializers.Serializer):
    batch = serializers.IntegerField(help_text="the batch's id")
    annotator__username = serializers.CharField()
    judgements = serializers.IntegerField()
    sets = serializers.IntegerField(help_text="sets with live judgements")


class ProjectProgressSerializer(serializers.Serializer):
    """What `selectors.project_progress` answers (schema only)."""

    batches = BatchProgressSerializer(many=True)
    annotators = AnnotatorProgressSerializer(many=True, help_text="one row per annotator × batch")
    n_annotators = serializers.IntegerField()


class ProgressApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ProjectProgressSerializer)
    def get(self, request, pk: int):
        project = _project_for(request, pk, manage=True)
        return Response(selectors.project_progress(project=project))


# --- annotating ---------------------------------------------------------------------------------

class NextSetVerseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    verse_id = serializers.CharField()
    text = serializers.CharField()
    translation = serializers.CharField(allow_blank=True)


class NextSetItemSerializer(serializers.Serializer):
    assignment_id = serializers.IntegerField()
    pair_id = serializers.IntegerField()
    position = serializers.IntegerField()
    status = serializers.CharField()
    left = NextSetVerseSerializer()
    right = NextSetVerseSerializer()
    chosen = serializers.IntegerField(allow_null=True, help_text="the verse chosen, when judged")
    client_uuid = serializers.UUIDField(allow_null=True)
    covered_elsewhere = serializers.BooleanField()


class NextSetProgressSerializer(serializers.Serializer):
    pairs = serializers.IntegerField()
    pairs_covered = serializers.IntegerField()
    my_judgements = serializers.IntegerField()
    my_total = serializers.IntegerField(allow_null=True, help_text="pilot batches: every pair, else null")


class NextSetOpenSetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    expires_at = serializers.DateTimeField(allow_null=True)
    items = NextSetItemSerializer(many=True)


class NextSetOutputSerializer(serializers.Serializer):
    """What `set_payload` answers (schema only): the set to judge, or `done` with no `set`."""

    batch = inline_serializer("NextSetBatch", {"id": serializers.IntegerField(), "name": serializers.CharField(),
                                               "pilot": serializers.BooleanField()})
    reference = NextSetVerseSerializer()
    instructions = serializers.CharField(allow_blank=True)
    session_minutes = serializers.IntegerField(allow_null=True)
    progress = NextSetProgressSerializer()
    done = serializers.BooleanField()
    set = NextSetOpenSetSerializer(required=False, help_text="absent when done")


class NextSetApi(APIView):
    """Start or resume annotating a batch: the caller's open set, else a new one; `done` when nothing is left.
    No request body."""

    permission_classes = [IsAnnotator]

    @extend_schema(request=None, responses=NextSetOutputSerializer)
    def post(self, request, pk: int):
        batch, annotation_set = scheduling.set_next_in_batch(batch_id=pk, annotator=request.user)
        return Response(set_payload(annotation_set=annotation_set, batch=batch, user=request.user))


class JudgementApi(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(request=JudgementInputSerializer, responses={201: JudgementSerializer, 200: JudgementSerializer})
    def post(self, request):
        data = judgement_input(request.data)
        judgement, created = judgement_services.judgement_submit(
            annotator=request.user, assignment_id=data["assignment_id"], chosen_verse_id=data["chosen_verse"],
            client_uuid=data["client_uuid"], response_ms=data.get("response_ms"), pair_id=data.get("pair_id"),
        )
        return Response(judgement_payload(judgement), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class UndoApi(APIView):
    permission_classes = [IsAnnotator]

    @extend_schema(request=UndoInputSerializer, responses=JudgementSerializer)
    def post(self, request, pk: int):
        serializer = UndoInputSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        judgement = judgement_services.judgement_undo_last(
            annotator=request.user, set_id=pk, client_uuid=serializer.validated_data.get("client_uuid"))
        return Response(JudgementSerializer(judgement).data)


class MyBatchSerializer(serializers.Serializer):
    """One row of `selectors.annotator_batches` (schema only)."""

    project = serializers.CharField(help_text="the project's name")
    batch_id = serializers.IntegerField()
    batch = serializers.CharField(help_text="the batch's name")
    status = serializers.CharField()
    n_pairs = serializers.IntegerField()
    my_judgements = serializers.IntegerField(help_text="your live judgements in the batch")


class MyProjectsApi(APIView):
    """Projects and batches the current annotator may work on, with their own counts."""

    permission_classes = [IsAnnotator]
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
    pagination_class = Pagination

    @extend_schema(responses=list_responses(MyBatchSerializer))
    def get(self, request):
        return paginated(request, selectors.annotator_batches(user=request.user), view=self)
