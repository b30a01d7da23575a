"""The access check the lead's pages share."""
from __future__ import annotations

from annotation import selectors
from annotation.models import Project


def managed_project(request, pk: int) -> Project:
    """The project, if the request's user leads it (otherwise 403 with the reason)."""
    return selectors.project_get_for(pk=pk, user=request.user, access="manage",
                                     denied="Only the project's leads can see this page.")
