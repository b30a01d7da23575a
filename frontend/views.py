"""Server-rendered pages shared by every role: home, jobs, health."""
import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.db import connection
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache

from core.authentication import token_expired
from core.models import ApiToken
from core.services import token_issue
from frontend.sections import for_user
from jobs.models import Job
from jobs.selectors import job_ahead, job_list, job_visible_to


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
    return render(request, "frontend/job.html", {"job": job, "ahead": job_ahead(job)})


@never_cache  # Cache-Control: no-store: the answer to a POST holds the new key
@login_required
def api_token(request):
    """The user's API token: its first characters, when it was made and when it expires. POST issues a new one
    (the old key stops working), shown in this answer only: only its digest is stored."""
    key = None
    if request.method == "POST":
        key = token_issue(user=request.user)
        messages.success(request, "A new API token was issued; the old one no longer works.")
    token = ApiToken.objects.filter(user=request.user).first()
    hours = settings.SIMILIA_TOKEN_TTL_HOURS
    expires = token.created + dt.timedelta(hours=hours) if token and hours else None
    return render(request, "frontend/api_token.html",
                  {"token": token, "key": key, "expires": expires, "expired": token and token_expired(token)})


def favicon(request):
    """Pages link their icon; the admin's and the API's pages do not, and browsers then ask for /favicon.ico."""
    response = FileResponse(open(finders.find("similia/favicon.svg"), "rb"), content_type="image/svg+xml")
    response["Cache-Control"] = "max-age=86400"
    return response


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})
