"""annotation.selectors.project_get_for: the one "fetch a project and check access" helper of pages and APIs."""
import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.selectors import project_get_for
from tests.conftest import api_key


@pytest.mark.django_db
def test_access_levels_for_each_kind_of_user(small_project, lead_user, annotators, make_user):
    project, _ = small_project
    researcher, outsider, other_lead = make_user("r1", "researcher"), make_user("o1", "annotator"), make_user("l2", "lead")
    member = annotators[0]
    assert project_get_for(pk=project.pk, user=member) == project  # view: members
    assert project_get_for(pk=project.pk, user=researcher) == project  # view: researchers see every project
    with pytest.raises(Http404):
        project_get_for(pk=project.pk, user=outsider)  # not revealed to non-members
    with pytest.raises(Http404):
        project_get_for(pk=project.pk + 999, user=lead_user)
    assert project_get_for(pk=project.pk, user=lead_user, access="manage") == project
    for user in (member, researcher, other_lead):
        with pytest.raises(PermissionDenied, match="Only the project's leads can do this."):
            project_get_for(pk=project.pk, user=user, access="manage")
    assert project_get_for(pk=project.pk, user=researcher, access="results") == project
    with pytest.raises(PermissionDenied, match="Exports are for"):
        project_get_for(pk=project.pk, user=member, access="results", denied="Exports are for leads.")


@pytest.mark.django_db
def test_api_and_pages_keep_their_messages(small_project, annotators, client):
    from rest_framework.test import APIClient

    project, _ = small_project
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(annotators[0])}")
    refused = api.get(f"/api/v1/projects/{project.pk}/scores/")
    assert refused.status_code == 403 and refused.json()["detail"].startswith("Exports are for")
    client.force_login(annotators[0])
    page = client.get(f"/projects/{project.pk}/dashboard/")
    assert page.status_code == 403
