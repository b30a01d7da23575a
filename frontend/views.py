"""Server-rendered pages shared by every role: home, jobs, health."""
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render

from frontend.sections import for_user
from jobs.models import Job
from jobs.selectors import job_list, job_visible_to


@login_required
def home(request):
    return render(
        request,
        "frontend/home.html",
        {"recent_jobs": job_list(user=request.user)[:5], "home_sections": for_user(request.user)},
    )


@login_required
def jobs_page(request):
    return render(request, "frontend/jobs.html", {"jobs": job_list(user=request.user)[:200]})


@login_required
def job_page(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    if not job_visible_to(job=job, user=request.user):
        raise Http404
    return render(request, "frontend/job.html", {"job": job})


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
