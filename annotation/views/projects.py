"""The lead's project pages: the project list and creation, a project's page (members, verse import,
batches and their status)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.forms import (
    AccountCreateForm,
    BatchCreateForm,
    BatchRenameForm,
    BatchStatusForm,
    InvitationForm,
    MemberAddForm,
    ProjectCreateForm,
    ProjectRenameForm,
    ProjectSettingsForm,
    StudyGoldForm,
    StudyItemForm,
    StudySettingsForm,
    VerseImportForm,
    form_errors,
)
from annotation.importing import VerseFileError
from annotation.models import Batch, Membership, Pair, Project
from annotation.services import projects as project_services
from annotation.services.errors import AnnotationError
from annotation.services.study import study_rows
from annotation.views.access import managed_project
from core.page_actions import page_action, say_done
from core.roles import LEAD, has_role
from core.upload_limit import upload_refusal


@login_required
def project_list(request):
    if not has_role(request.user, LEAD):
        raise PermissionDenied("Projects are managed by leads.")
    projects = selectors.projects_managed_by(user=request.user)
    return render(request, "annotation/project_list.html", {"projects": projects,
                                                            "modes": Project.OverlapMode.choices})


def _project_form_again(request, form: ProjectCreateForm, reason: str, status: int):
    """The projects page again with what the lead typed and why it was refused (never an empty form)."""
    context = {"projects": selectors.projects_managed_by(user=request.user), "modes": Project.OverlapMode.choices,
               "form": form, "form_error": reason}
    return render(request, "annotation/project_list.html", context, status=status)


@login_required
@require_POST
def project_create(request):
    form = ProjectCreateForm(request.POST)
    if not form.is_valid():
        return _project_form_again(request, form, form_errors(form), 400)

    def created(project):
        messages.success(request, f"Project {project.name} created.")
        return redirect("annotation:project", pk=project.pk)

    return page_action(request, lambda: project_services.project_create(owner=request.user, **form.cleaned_data),
                       done=created, again=lambda exc: _project_form_again(request, form, str(exc), exc.status),
                       errors=AnnotationError)


@login_required
def project_detail(request, pk: int):
    return project_page(request, managed_project(request, pk))


def project_page(request, project: Project, *, status: int = 200, **refused) -> HttpResponse:
    """The project page. ``refused`` holds the bound form a post brought back (``member=``, ``account=``,
    ``invitation=``, ``batch=``, ``verses=``, ``batch_status=``, ``settings=``, ``attention=`` with ``attention_batch=``
    its batch id): its errors are shown next to it and what the lead typed stays in it."""
    progress = selectors.project_progress(project=project)
    checks = dict(Pair.objects.filter(batch__project=project, attention_answer__isnull=False).values("batch")
                  .annotate(n=Count("id")).values_list("batch", "n"))
    for row in progress["batches"]:
        row["attention_checks"] = checks.get(row["id"], 0)
    forms = {"member": MemberAddForm(), "account": AccountCreateForm(), "invitation": InvitationForm(),
             "batch": BatchCreateForm(), "verses": VerseImportForm(), "batch_status": BatchStatusForm(), "batch_rename": BatchRenameForm(),
             "settings": ProjectSettingsForm.for_project(project), "study": StudySettingsForm.for_project(project),
             "study_item": StudyItemForm(), "study_gold": StudyGoldForm(),
             "rename": ProjectRenameForm(initial={"name": project.name, "title": project.title})}
    attention_batch = refused.pop("attention_batch", None)
    forms.update(refused)
    context = {
        "project": project,
        "progress": progress,
        "members": project.memberships.select_related("user").order_by("role", "user__username"),
        "n_verses": project.verses.count(),
        "member_roles": Membership.Role.choices,  # not "roles": that name is the menu's (context processor)
        "modes": Project.OverlapMode.choices,
        "invitations": project.invitations.filter(revoked=False).order_by("-created")[:20],
        "invite_base": request.build_absolute_uri("/invite/"),
        "forms": forms,
        "attention_batch": attention_batch,
        **study_card(project),
    }
    response = render(request, "annotation/project_detail.html", context, status=status)
    add_never_cache_headers(response)  # Cache-Control: no-store: the invitation links are secrets
    return response


def study_card(project: Project) -> dict:
    """What the project page's study card lists: the study pairs and the annotators who failed the check."""
    return {"study_items": project.study_items.select_related("reference", "answer", "other").order_by("kind", "pk"),
            "study_failed": [dict(r, username=name) for name, r in study_rows(project).items() if r["failed"]]}


@login_required
@require_POST
def member_add(request, pk: int):
    project = managed_project(request, pk)
    form = MemberAddForm(request.POST)
    if not form.is_valid():
        return project_page(request, project, status=400, member=form)
    url = reverse("annotation:project", args=[pk])
    return page_action(request, lambda: project_services.membership_add(project=project, **form.cleaned_data),
                       done=say_done(request, url, f"{form.cleaned_data['username']} added."), back=url,
                       errors=AnnotationError)


@csrf_exempt  # checked below, once the body is known to be within the size limit
@login_required
@require_POST
def verses_upload(request, pk: int):
    project = managed_project(request, pk)
    refused = upload_refusal(request)  # the limit applies while the body streams in, before anything else reads it
    if refused:  # nothing is stored, so answering without the CSRF check changes nothing
        messages.error(request, f"Nothing imported. {refused}")
        return redirect("annotation:project", pk=pk)
    return csrf_protect(_verses_upload)(request, project)


def _verses_upload(request, project: Project):
    pk = project.pk
    form = VerseImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return project_page(request, project, status=400, verses=form)
    upload = form.cleaned_data["file"]

    def imported():
        project_services.check_upload_size(size=upload.size, filename=upload.name)
        return project_services.verses_import(project=project, data=upload.read(), filename=upload.name,
                                              create_batches=form.cleaned_data["create_batches"], owner=request.user)

    def said(summary) -> str:
        text = f"Imported {summary['created']} new verse(s) ({summary['unchanged']} already present)"
        if summary["batches"]:
            text += f"; created batches: {', '.join(summary['batches'])}"
        return text + ". " + " ".join(summary["notes"])

    url = reverse("annotation:project", args=[pk])
    return page_action(request, imported, done=say_done(request, url, said), back=url,
                       refused="Nothing imported. {reason}", errors=(VerseFileError, AnnotationError))


@login_required
@require_POST
def batch_create(request, pk: int):
    project = managed_project(request, pk)
    form = BatchCreateForm(request.POST)
    if not form.is_valid():
        return project_page(request, project, status=400, batch=form)
    reference_id, candidates = form.cleaned_data["reference_id"], form.cleaned_data["candidate_ids"]
    if form.cleaned_data["all_others"]:
        candidates = [v for v in project.verses.values_list("verse_id", flat=True) if v != reference_id]
    url = reverse("annotation:project", args=[pk])

    def made(batch_or_job):
        if isinstance(batch_or_job, Batch):
            messages.success(request, f"Batch {batch_or_job.name} created with {batch_or_job.n_pairs} pairs.")
            return redirect(url)
        n = len(batch_or_job.params["candidate_ids"])
        messages.success(request, f"Batch {batch_or_job.params['name']} ({n:,} candidates, {n * (n - 1) // 2:,} pairs) "
                                  "is being created by this job; it opens for annotators when all its pairs are written.")
        return redirect("job", pk=batch_or_job.pk)

    return page_action(request, lambda: project_services.batch_create_or_job(
        project=project, reference_id=reference_id, candidate_ids=candidates, name=form.cleaned_data["name"],
        pilot=form.cleaned_data["pilot"], owner=request.user), done=made, back=url, refused="Batch not created",
        errors=AnnotationError)


def lead_action(request, pk: int, action, done: str, refused: str, form_class=None, form_name: str = "",
                anchor: str = ""):
    """Run ``action(project, **cleaned_data)`` for a lead; say what happened (``done`` may use ``{result}``); back
    to the project page at ``anchor``. With ``form_class`` the post is checked first: a bad value brings the page
    back with that form (as ``form_name``) and its errors, status 400."""
    project = managed_project(request, pk)
    data = {}
    if form_class is not None:
        form = form_class(request.POST)
        if not form.is_valid():
            return project_page(request, project, status=400, **{form_name: form})
        data = form.cleaned_data
    url = reverse("annotation:project", args=[pk]) + anchor
    return page_action(request, lambda: action(project, **data), done=say_done(request, url, lambda result: done.format(result=result)),
                       back=url, refused=refused, errors=AnnotationError)


def _batch_action(request, pk: int, batch_id: int, action, refused: str, form_class=None, form_name: str = ""):
    """`lead_action` on one batch of the project: ``action(batch, **cleaned_data)`` returns the message."""
    return lead_action(request, pk, lambda project, **data: action(
        get_object_or_404(Batch, pk=batch_id, project=project), **data), "{result}", refused, form_class, form_name)


@login_required
@require_POST
def batch_status(request, pk: int, batch_id: int):
    def change(batch, status):
        project_services.batch_set_status(batch=batch, status=status)
        return f"Batch {batch.name} is now {batch.status}" + (
            ": annotators get no more pairs from it." if batch.status == "closed" else ".")

    return _batch_action(request, pk, batch_id, change, "Status not changed", BatchStatusForm, "batch_status")


@login_required
@require_POST
def batch_rename(request, pk: int, batch_id: int):
    def rename(batch, name):
        old = batch.name
        project_services.batch_rename(batch=batch, name=name)
        return f"Batch {old} is now called {batch.name}; its judgements and scores follow it."

    return _batch_action(request, pk, batch_id, rename, "Not renamed", BatchRenameForm, "batch_rename")
