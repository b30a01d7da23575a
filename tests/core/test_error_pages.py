"""Error pages come in the site's layout with the reason, also under DEBUG; the API keeps JSON."""
import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [False, True])
def test_unknown_address_is_a_404_page_in_the_layout_not_the_url_list(client, make_user, debug):
    client.force_login(make_user("someone", "annotator"))
    with override_settings(DEBUG=debug):
        response = client.get("/no/such/page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "Page not found" in html and "There is no page at this address." in html
    assert 'class="topbar"' in html and "URLconf" not in html and "admin/" not in html


def test_forbidden_page_says_why_in_the_layout(client, make_user):
    from annotation.services.projects import project_create

    lead = make_user("leadq", "lead")
    project = project_create(owner=lead, name="p403")
    client.force_login(make_user("annq", "annotator"))
    response = client.get(f"/projects/{project.pk}/dashboard/")
    html = response.content.decode()
    assert response.status_code == 403
    assert "Only the project&#x27;s leads and researchers can see the dashboard." in html
    assert 'class="topbar"' in html and "Not allowed" in html


def test_missing_object_is_a_404_page_and_the_api_keeps_json(client, make_user):
    client.force_login(make_user("leadr", "lead"))
    response = client.get("/projects/999999/")
    assert response.status_code == 404 and "Page not found" in response.content.decode()
    api = client.get("/api/v1/projects/999999/")
    assert api.status_code == 404 and api["Content-Type"].startswith("application/json")
