"""The lead's housekeeping pages: rename, archive and delete a project; the verse list with search, a verse's
page with rename and delete; the batch deletion's confirmation page. Each deletion or archiving has a
confirmation page (`frontend.confirm`) saying what goes and what is kept; the rules are in
`annotation/services/curation.py`."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors
from annotation.forms import ProjectRenameForm, VerseRenameForm
from annotation.models import Batch, Verse
from annotation.services import curation
from annotation.services import projects as project_services
from annotation.services.errors import AnnotationError
from annotation.views.access import managed_project
from annotation.views.projects import project_page
from core.page_actions import page_action, say_done
from frontend.confirm import confirm_page

VERSES_PER_PAGE = 50


def _run(request, action, done_url: str, fail_url: str):
    """Run ``action()`` (a service returning a message); say what happened; go to ``done_url`` or ``fail_url``."""
    return page_action(request, action, done=say_done(request, done_url), back=fail_url, errors=AnnotationError)


# --- projects -------------------------------------------------------------------------------------

@login_required
@require_POST
def project_rename(request, pk: int):
    project = managed_project(request, pk)
    form = ProjectRenameForm(request.POST)
    if not form.is_valid():
        return project_page(request, project, status=400, rename=form)
    old = project.name

    def rename():
        curation.project_rename(project=project, actor=request.user, **form.cleaned_data)
        return f"Project {old} is now {project.name} ({project.title}); its batches, judgements and exports follow it."

    url = reverse("annotation:project", args=[pk])
    return _run(request, rename, url, url + "#manage")


@login_required
@require_http_methods(["GET", "POST"])
def project_archive(request, pk: int):
    project = managed_project(request, pk)
    archive = project.archived_at is None
    if request.method == "GET":
        plan = curation.project_archive_plan(project)
        return confirm_page(request, title=f"{'Archive' if archive else 'Unarchive'} project {project.name}?",
                            action=request.path, cancel=reverse("annotation:project", args=[pk]),
                            button="Archive the project" if archive else "Unarchive the project", danger=False, **plan)
    url = reverse("annotation:project", args=[pk])
    return _run(request, lambda: curation.project_archive(project=project, actor=request.user, archived=archive),
                url, url)


@login_required
@require_http_methods(["GET", "POST"])
def project_delete(request, pk: int):
    project = managed_project(request, pk)
    if request.method == "GET":
        return confirm_page(request, title=f"Delete project {project.name}?", action=request.path,
                            cancel=reverse("annotation:project", args=[pk]), button="Delete the project for good",
                            **curation.project_delete_plan(project))
    return _run(request, lambda: curation.project_delete(project=project, actor=request.user),
                reverse("annotation:projects"), reverse("annotation:project", args=[pk]))


# --- batches --------------------------------------------------------------------------------------

@login_required
@require_http_methods(["GET", "POST"])
def batch_delete(request, pk: int, batch_id: int):
    project = managed_project(request, pk)
    batch = get_object_or_404(Batch, pk=batch_id, project=project)
    url = reverse("annotation:project", args=[pk])
    if request.method == "GET":
        return confirm_page(request, title=f"Delete batch {batch.name}?", action=request.path, cancel=url,
                            button="Delete the batch", **curation.batch_delete_plan(batch))
    return _run(request, lambda: project_services.batch_delete(batch=batch), url, url)


# --- verses ---------------------------------------------------------------------------------------

@login_required
def verse_list(request, pk: int):
    project = managed_project(request, pk)
    q = request.GET.get("q", "")[:200]
    page = Paginator(selectors.verse_search(project=project, q=q), VERSES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "annotation/verse_list.html", {"project": project, "q": q, "page": page})


def _verse(project, verse_pk: int) -> Verse:
    return get_object_or_404(Verse, pk=verse_pk, project=project)


@login_required
def verse_detail(request, pk: int, verse_pk: int, *, form: VerseRenameForm | None = None, status: int = 200):
    project = managed_project(request, pk)
    verse = _verse(project, verse_pk)
    uses = {what: n for what, n in curation._verse_uses(verse).items() if n}
    return render(request, "annotation/verse_detail.html",
                  {"project": project, "verse": verse, "uses": uses, "form": form or VerseRenameForm(
                      initial={"verse_id": verse.verse_id})}, status=status)


@login_required
@require_POST
def verse_rename(request, pk: int, verse_pk: int):
    project = managed_project(request, pk)
    verse = _verse(project, verse_pk)
    form = VerseRenameForm(request.POST)
    if not form.is_valid():
        return verse_detail(request, pk, verse_pk, form=form, status=400)
    old = verse.verse_id

    def refused(exc):
        form.add_error("verse_id", str(exc).removeprefix("verse_id: "))
        return verse_detail(request, pk, verse_pk, form=form, status=exc.status)

    return page_action(request, lambda: curation.verse_rename(verse=verse, actor=request.user,
                                                              verse_id=form.cleaned_data["verse_id"]),
                       done=say_done(request, reverse("annotation:verse", args=[pk, verse_pk]), lambda _: (
                           f"Verse {old} is now {verse.verse_id}; its batches and judgements follow it, and exports "
                           "name it by the new id.")), again=refused, errors=AnnotationError)


@login_required
@require_http_methods(["GET", "POST"])
def verse_delete(request, pk: int, verse_pk: int):
    project = managed_project(request, pk)
    verse = _verse(project, verse_pk)
    back = reverse("annotation:verse", args=[pk, verse_pk])
    if request.method == "GET":
        return confirm_page(request, title=f"Delete verse {verse.verse_id}?", action=request.path, cancel=back,
                            button="Delete the verse", **curation.verse_delete_plan(verse))
    return _run(request, lambda: curation.verse_delete(verse=verse, actor=request.user),
                reverse("annotation:verses", args=[pk]), back)

