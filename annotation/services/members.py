"""What a lead does with people, without the admin site: create annotator accounts, hand out
invitation links, remove members. Every function checks the acting user may manage the project."""
from __future__ import annotations

import datetime as dt
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Invitation, Membership, Project
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound
from core.roles import ANNOTATOR, user_roles
from core.services import roles_ensure

USERNAME_MAX = 150


def check_can_manage(*, project: Project, user) -> None:
    """The services below also act for pages: they check the actor themselves (leads of the project, staff)."""
    from annotation.selectors import user_can_manage

    if not user_can_manage(project=project, user=user):
        raise NotAllowed("Only the project's leads can do this.")


def _check_new_account(username: str, password: str) -> None:
    if not username or len(username) > USERNAME_MAX or not all(c.isalnum() or c in "@.+-_" for c in username):
        raise AnnotationError("A username is 1–150 letters, digits and @ . + - _ characters.")
    if get_user_model().objects.filter(username=username).exists():
        raise Conflict(f"The username {username!r} is taken.")
    try:
        validate_password(password)
    except ValidationError as exc:
        raise AnnotationError("Password not accepted: " + " ".join(exc.messages)) from None


def _grant_annotator(user) -> None:
    if ANNOTATOR not in user_roles(user):
        user.groups.add(roles_ensure()[ANNOTATOR])
        user.__dict__.pop("_similia_roles", None)


@transaction.atomic
def annotator_account_create(*, project: Project, actor, username: str, password: str) -> Membership:
    """Create an annotator account and add it to the project (the lead tells the person the password)."""
    check_can_manage(project=project, user=actor)
    _check_new_account(username, password)
    user = get_user_model().objects.create_user(username=username, password=password)
    _grant_annotator(user)
    return Membership.objects.create(project=project, user=user, role=Membership.Role.ANNOTATOR)


@transaction.atomic
def membership_remove(*, project: Project, actor, user_id: int) -> str:
    """Remove a member. Their judgements stay (they are data); they can no longer annotate or manage.
    The owner cannot be removed. Returns the removed user's name."""
    check_can_manage(project=project, user=actor)
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise NotFound("That user is not a member of this project.")
    if membership.user_id == project.owner_id:
        raise NotAllowed("The project's owner cannot be removed.")
    name = membership.user.username
    membership.delete()
    return name


@transaction.atomic
def invitation_create(*, project: Project, actor, days: int = 14, max_uses: int = 1) -> Invitation:
    check_can_manage(project=project, user=actor)
    if not 1 <= days <= 90:
        raise AnnotationError("An invitation is valid for 1 to 90 days.")
    if not 1 <= max_uses <= 100:
        raise AnnotationError("An invitation can be used by 1 to 100 people.")
    return Invitation.objects.create(project=project, created_by=actor, token=secrets.token_urlsafe(24),
                                     expires_at=timezone.now() + dt.timedelta(days=days), max_uses=max_uses)


@transaction.atomic
def invitation_revoke(*, project: Project, actor, invitation_id: int) -> None:
    check_can_manage(project=project, user=actor)
    updated = Invitation.objects.filter(project=project, pk=invitation_id).update(revoked=True)
    if not updated:
        raise NotFound("No such invitation.")


def invitation_problem(invitation: Invitation | None) -> str | None:
    """Why an invitation cannot be used (None when it can)."""
    if invitation is None:
        return "This invitation link is not valid. Ask the project's lead for a new one."
    if invitation.revoked:
        return "This invitation was withdrawn by the project's lead."
    if invitation.expires_at <= timezone.now():
        return "This invitation has expired. Ask the project's lead for a new one."
    if invitation.uses >= invitation.max_uses:
        return "This invitation has been used already. Ask the project's lead for a new one."
    return None


@transaction.atomic
def invitation_accept(*, token: str, user=None, username: str = "", password: str = ""):
    """Use an invitation: the logged-in ``user`` joins, or a new account ``username``/``password`` is
    created. Grants the annotator role and adds the membership. Returns (user, project)."""
    invitation = Invitation.objects.select_for_update().select_related("project").filter(token=token).first()
    problem = invitation_problem(invitation)
    if problem:
        raise AnnotationError(problem, status=410 if invitation else 404)
    if user is None:
        _check_new_account(username, password)
        user = get_user_model().objects.create_user(username=username, password=password)
    _grant_annotator(user)
    Membership.objects.get_or_create(project=invitation.project, user=user,
                                     defaults={"role": Membership.Role.ANNOTATOR})
    Invitation.objects.filter(pk=invitation.pk).update(uses=invitation.uses + 1)
    return user, invitation.project
