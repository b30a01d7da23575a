"""Roles are Django groups. A user may hold several; staff see everything in the admin site.

- annotator: judges pairs of the projects they are a member of.
- lead: manages projects and sees the dashboards of their projects.
- researcher: manages datasets, models and evaluation runs.
"""
from __future__ import annotations

ANNOTATOR = "annotator"
LEAD = "lead"
RESEARCHER = "researcher"
ALL_ROLES = (ANNOTATOR, LEAD, RESEARCHER)


def user_roles(user) -> set[str]:
    """The role names a user holds (empty for anonymous users); cached on the user object."""
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_similia_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
        user._similia_roles = cached
    return cached


def remember_roles(user, names) -> None:
    """Cache the role names already read with the user (the token authentication reads them in its one
    statement), so `user_roles` asks the database nothing more in this request."""
    user._similia_roles = {name for name in names if name in ALL_ROLES}


def has_role(user, *roles: str) -> bool:
    """True if the user holds any of `roles` (staff count as holding every role)."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff:
        return True
    return bool(user_roles(user) & set(roles))
