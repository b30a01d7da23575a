"""Pages with which a lead runs a project alone: settings and instructions, members (remove, create
annotator accounts, invitation links), and the invitation page itself."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.models import Batch, Invitation, Project
from annotation.services import attention as attention_services
from annotation.services import members as member_services
from annotation.services import projects as project_services
from annotation.services.errors import AnnotationError
from annotation.views.access import managed_project

SETTINGS_INT_FIELDS = ("set_size", "overlap_per_set", "set_timeout_minutes", "attention_per_set")


def _settings_from_post(data) -> dict:
    fields = {"title": data.get("title", "").strip(), "instructions": data.get("instructions", "").strip(),
              "overlap_mode": data.get("overlap_mode") or Project.OverlapMode.INTER}
    for name in SETTINGS_INT_FIELDS:
        raw = data.get(name, "").strip() or ("0" if name == "attention_per_set" else "")
        try:
            fields[name] = int(raw)
        except ValueError:
            raise AnnotationError(f"{name.replace('_', ' ')} must be a whole number, not {raw!r}.") from None
    raw = data.get("session_minutes", "").strip()
    try:
        fields["session_minutes"] = int(raw) if raw else None
    except ValueError:
        raise AnnotationError(f"break reminder must be a whole number of minutes, not {raw!r}.") from None
    if not fields["instructions"]:
        fields["instructions"] = Project._meta.get_field("instructions").default
    return fields


@login_required
@require_POST
def project_settings(request, pk: int):
    project = managed_project(request, pk)
    try:
        fields = _settings_from_post(request.POST)
        project = Project.objects.get(pk=project.pk)  # a fresh copy: a refused change leaves nothing behind
        project_services.project_update(project=project, **fields)
    except AnnotationError as exc:
        messages.error(request, f"Settings not saved: {exc}")
        return redirect(reverse("annotation:project", args=[pk]) + "#settings")
    messages.success(request, "Settings saved.")
    return redirect(reverse("annotation:project", args=[pk]) + "#settings")


def _members_action(request, pk: int, action, done: str, refused: str):
    """Run ``action(project)`` for a lead; say what happened; back to the members section.
    ``done`` may use ``{result}``; ``ValueError`` stands for a number that is not one."""
    project = managed_project(request, pk)
    try:
        result = action(project)
        messages.success(request, done.format(result=result))
    except ValueError:
        messages.error(request, f"{refused}: numbers must be whole numbers.")
    except AnnotationError as exc:
        messages.error(request, f"{refused}: {exc}")
    return redirect(reverse("annotation:project", args=[pk]) + "#members")


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
    username = request.POST.get("username", "").strip()
    return _members_action(
        request, pk, lambda project: member_services.annotator_account_create(
            project=project, actor=request.user, username=username, password=request.POST.get("password", "")),
        f"Account {username} created and added as annotator; give them the password you chose.",
        "Account not created")


@login_required
@require_POST
def invitation_create(request, pk: int):
    return _members_action(
        request, pk, lambda project: member_services.invitation_create(
            project=project, actor=request.user, days=int(request.POST.get("days") or 14),
            max_uses=int(request.POST.get("max_uses") or 1)),
        "Invitation link created: copy it from the list below.", "Invitation not created")


@login_required
@require_POST
def invitation_revoke(request, pk: int, invitation_id: int):
    return _members_action(
        request, pk, lambda project: member_services.invitation_revoke(project=project, actor=request.user,
                                                                       invitation_id=invitation_id),
        "Invitation withdrawn.", "Not withdrawn")


def invitation_accept(request, token: str):
    """GET: what the invitation is for; POST: join (logged in) or create an account and join."""
    invitation = Invitation.objects.select_related("project").filter(token=token).first()
    problem = member_services.invitation_problem(invitation)
    context = {"invitation": invitation, "problem": problem, "token": token}
    if request.method == "POST" and not problem:
        try:
            user = request.user if request.user.is_authenticated else None
            user, project = member_services.invitation_accept(
                token=token, user=user, username=request.POST.get("username", "").strip(),
                password=request.POST.get("password", ""))
        except AnnotationError as exc:
            context["error"] = str(exc)
            context["username"] = request.POST.get("username", "")
            return render(request, "annotation/invitation.html", context, status=exc.status)
        if not request.user.is_authenticated:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"You joined {project.title or project.name} as an annotator.")
        return redirect(reverse("home") + "#annotate")
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
    try:
        if request.POST.get("answer_id"):
            attention_services.attention_check_mark(batch=batch, actor=request.user,
                                                    answer_id=request.POST["answer_id"].strip(),
                                                    other_id=request.POST.get("other_id", "").strip())
            messages.success(request, f"Known-answer pair added to {batch.name}; it is never scored.")
        else:
            n = attention_services.attention_checks_build(batch=batch, actor=request.user,
                                                          n=int(request.POST.get("build") or 5))
            messages.success(request, f"{n} attention check(s) added to {batch.name}.")
    except ValueError:
        messages.error(request, "The number of checks must be a whole number.")
    except AnnotationError as exc:
        messages.error(request, f"No check added: {exc}")
    return redirect(reverse("annotation:project", args=[pk]) + "#attention")
