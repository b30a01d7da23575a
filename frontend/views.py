"""Server-rendered pages shared by every role: home, jobs, health."""
import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.db import connection
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render

from core.authentication import token_for
from core.services import token_renew
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


@login_required
def api_token(request):
    """The user's API token, to copy into scripts; POST renews it (the old key stops working)."""
    if request.method == "POST":
        token_renew(user=request.user)
        messages.success(request, "Your API token was renewed; the old one no longer works.")
        return redirect("account-token")
    token = token_for(request.user)
    hours = settings.SIMILIA_TOKEN_TTL_HOURS
    expires = token.created + dt.timedelta(hours=hours) if hours else None
    return render(request, "frontend/api_token.html", {"token": token, "expires": expires})


def favicon(request):
    """Pages link their icon; the admin's and the API's pages do not, and browsers then ask for /favicon.ico."""
    response = FileResponse(open(finders.find("similia/favicon.svg"), "rb"), content_type="image/svg+xml")
    response["Cache-Control"] = "max-age=86400"
    return response


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
