"""DRF permission classes for the roles (researchers' reads and writes are checked by each app's own classes,
e.g. ``benchmarks.api.ResearcherOrLeadReads``)."""
from rest_framework.permissions import BasePermission

from core.roles import ANNOTATOR, LEAD, has_role


class _RolePermission(BasePermission):
    roles: tuple[str, ...] = ()
    message = "This needs one of the roles: {roles}."

    def has_permission(self, request, view) -> bool:
        allowed = has_role(request.user, *self.roles)
        if not allowed:
            self.message = f"This needs one of the roles: {', '.join(self.roles)}."
        return allowed


class IsAnnotator(_RolePermission):
    roles = (ANNOTATOR,)


class IsLead(_RolePermission):
    roles = (LEAD,)
