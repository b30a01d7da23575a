"""Pages with which a lead runs a project alone: settings and instructions, members (remove, create
annotator accounts, invitation links), and the invitation page itself."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from annotation.forms import (
    AccountCreateForm,
    AttentionCheckForm,
    InvitationAcceptForm,
    InvitationForm,
    ProjectSettingsForm,
)
from annotation.models import Batch, Invitation, Project
from annotation.services import attention as attention_services
from annotation.services import members as member_services
from annotation.services import projects as project_services
from annotation.services.errors import AnnotationError
from annotation.views.access import managed_project
from annotation.views.projects import lead_action, project_page
from core.page_actions import page_action, say_done


@login_required
@require_POST
def project_settings(request, pk: int):
    def save(project, **settings):
        project = Project.objects.get(pk=project.pk)  # a fresh copy: a refused change leaves nothing behind
        project_services.project_update(project=project, **settings)

    return lead_action(request, pk, save, "Settings saved.", "Settings not saved", ProjectSettingsForm, "settings",
                       anchor="#settings")


def _members_action(request, pk: int, action, done: str, refused: str, form_class=None, form_name: str = ""):
    """`lead_action` back to the members section."""
    return lead_action(request, pk, action, done, refused, form_class, form_name, anchor="#members")


@login_required
@require_POST
def member_remove(request, pk: int, user_id: int):
    return _members_action(
        request, pk, lambda project: member_services.membership_remove(project=project, actor=request.user,
                                                                       user_id=user_id),
        "{result} removed from the project (their judgements are kept).", "Not removed")


@login_required
@require_POST
def account_create(request, pk: int):
    return _members_action(
        request, pk, lambda project, **account: member_services.annotator_account_create(
            project=project, actor=request.user, **account),
        "Account {result.user.username} created and added as annotator; give them the password you chose.",
        "Account not created", AccountCreateForm, "account")


@login_required
@require_POST
def invitation_create(request, pk: int):
    return _members_action(
        request, pk, lambda project, **limits: member_services.invitation_create(
            project=project, actor=request.user, **limits),
        "Invitation link created: copy it from the list below.", "Invitation not created", InvitationForm,
        "invitation")


@login_required
@require_POST
def invitation_revoke(request, pk: int, invitation_id: int):
    return _members_action(
        request, pk, lambda project: member_services.invitation_revoke(project=project, actor=request.user,
                                                                       invitation_id=invitation_id),
        "Invitation withdrawn.", "Not withdrawn")


@never_cache  # the address holds the invitation's secret
def invitation_accept(request, token: str):
    """GET: what the invitation is for; POST: join (logged in) or create an account and join."""
    invitation = Invitation.objects.select_related("project").filter(token=token).first()
    problem = member_services.invitation_problem(invitation)
    context = {"invitation": invitation, "problem": problem, "token": token}
    if request.method == "POST" and not problem:
        user = request.user if request.user.is_authenticated else None
        account = {}
        if user is None:  # someone new: the account they chose
            form = context["form"] = InvitationAcceptForm(request.POST)
            if not form.is_valid():
                return render(request, "annotation/invitation.html", context, status=400)
            account = form.cleaned_data

        def joined(accepted):
            user, project = accepted
            if not request.user.is_authenticated:
                login(request, user, backend="core.authentication.UserWithRolesBackend")
            messages.success(request, f"You joined {project.title or project.name} as an annotator.")
            return redirect(reverse("home") + "#annotate")

        def refused(exc):
            context["error"] = str(exc)
            return render(request, "annotation/invitation.html", context, status=exc.status)

        return page_action(request, lambda: member_services.invitation_accept(token=token, user=user, **account),
                           done=joined, again=refused, errors=AnnotationError)
    response = render(request, "annotation/invitation.html", context,
                      status=(410 if invitation else 404) if problem else 200)
    response.similia_error_page = True  # the page says why itself; the generic 404 page must not replace it
    return response


@login_required
@require_POST
def attention_checks(request, pk: int, batch_id: int):
    """Add platform-built checks (``build``: how many) or mark a known-answer pair (``answer_id``, ``other_id``)."""
    project = managed_project(request, pk)
    batch = Batch.objects.filter(project=project, pk=batch_id).first()
    if batch is None:
        messages.error(request, "No such batch in this project.")
        return redirect(reverse("annotation:project", args=[pk]) + "#attention")
    form = AttentionCheckForm(request.POST)
    if not form.is_valid():
        return project_page(request, project, status=400, attention=form, attention_batch=batch.pk)
    data = form.cleaned_data

    def add() -> str:
        if data["answer_id"]:
            attention_services.attention_check_mark(batch=batch, actor=request.user, answer_id=data["answer_id"],
                                                    other_id=data["other_id"])
            return f"Known-answer pair added to {batch.name}; it is never scored."
        n = attention_services.attention_checks_build(batch=batch, actor=request.user, n=data["build"])
        return f"{n} attention check(s) added to {batch.name}."

    url = reverse("annotation:project", args=[pk]) + "#attention"
    return page_action(request, add, done=say_done(request, url), back=url, refused="No check added",
                       errors=AnnotationError)
