"""Job API: list, detail, cancel. Thin views over jobs.selectors / jobs.services."""
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.pagination import CsvListMixin
from jobs.models import Job
from jobs.selectors import job_ahead, job_cancellable_by, job_list, job_visible_to
from jobs.services import heartbeat_cutoff_passed, job_cancel, job_reap_stale


class JobSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", default=None, read_only=True)
    duration_seconds = serializers.FloatField(read_only=True, allow_null=True)
    error_message = serializers.CharField(read_only=True, help_text="the error as one sentence (no traceback)")
    lane = serializers.CharField(read_only=True, help_text="interactive (a worker slot is kept for it) or bulk")
    ahead = serializers.SerializerMethodField(help_text="jobs queued before it in its lane; null once it runs")

    class Meta:
        model = Job
        fields = [
            "id", "kind", "queue", "lane", "ahead", "params", "status", "progress", "progress_message", "log", "error",
            "error_message", "result", "owner", "created", "started", "finished", "heartbeat", "worker", "duration_seconds",
        ]
        read_only_fields = fields

    def get_ahead(self, job: Job) -> int | None:
        return job_ahead(job)


class JobListSerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = [f for f in JobSerializer.Meta.fields if f not in {"log", "result", "ahead"}]


class JobListApi(CsvListMixin, ListAPIView):
    """The caller's jobs (staff: every job), newest first; filters `status`, `kind`, `queue`. `?format=csv` answers
    every filtered row, `params` as a JSON cell."""

    permission_classes = [IsAuthenticated]
    serializer_class = JobListSerializer
    queryset = Job.objects.none()  # the model, for the schema (which has no user): get_queryset answers requests
    filterset_fields = ["status", "kind", "queue"]

    def get_queryset(self):
        return job_list(user=self.request.user)


def _get_visible(request, pk: int) -> Job:
    job = get_object_or_404(Job.objects.select_related("owner"), pk=pk)
    if not job_visible_to(job=job, user=request.user):
        from django.http import Http404

        raise Http404
    if heartbeat_cutoff_passed(job):
        job_reap_stale()
        job.refresh_from_db()
    return job


class JobDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=JobSerializer)
    def get(self, request, pk: int):
        return Response(JobSerializer(_get_visible(request, pk)).data)


class JobCancelApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=JobSerializer)
    def post(self, request, pk: int):
        job = _get_visible(request, pk)
        if not job_cancellable_by(job=job, user=request.user):
            return Response({"detail": "Only the job's owner, the leads of its project or staff can cancel it."},
                            status=status.HTTP_403_FORBIDDEN)
        job = job_cancel(job=job)
        return Response(JobSerializer(job).data)
