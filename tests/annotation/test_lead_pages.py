"""A lead runs a project without the admin site: settings, members, accounts, invitations, batches."""
import pytest
from django.contrib.auth import get_user_model

from annotation.models import Batch, Invitation, Membership, Project
from core.roles import user_roles

pytestmark = pytest.mark.django_db


def test_project_page_keeps_the_menu_and_offers_the_lead_tools(lead_client):
    client, project, _ = lead_client
    html = client.get(f"/projects/{project.pk}/").content.decode()
    nav = html[html.index('class="mainnav"'):html.index("</nav>")]
    assert 'data-role="lead"' in nav and "Jobs" in nav  # the project page's own "roles" no longer hides the menu
    for text in ("Settings and instructions", "Create an annotator account", "Invitation links", "remove"):
        assert text in html


def test_settings_and_instructions_can_be_edited_and_bad_overlap_says_so(lead_client):
    client, project, _ = lead_client
    page = client.post(f"/projects/{project.pk}/settings/", {
        "title": "Renamed", "overlap_mode": "retest", "set_size": "6", "overlap_per_set": "2", "session_minutes": "",
        "set_timeout_minutes": "20", "instructions": "Choose the verse closer in meaning.\nExample: …"}, follow=True)
    assert "Settings saved." in page.content.decode()
    project.refresh_from_db()
    assert (project.title, project.set_size, project.overlap_mode, project.session_minutes) == ("Renamed", 6, "retest", None)
    assert project.instructions.startswith("Choose the verse closer")
    page = client.post(f"/projects/{project.pk}/settings/", {
        "title": "X", "overlap_mode": "inter", "set_size": "3", "overlap_per_set": "5", "set_timeout_minutes": "20",
        "instructions": "x"}, follow=True)
    html = page.content.decode()
    assert "The overlap pairs per set (5) cannot exceed the pairs per set (3)." in html and "Constraint" not in html
    project.refresh_from_db()
    assert project.set_size == 6


def test_creating_a_project_with_overlap_above_set_size_keeps_the_form(client, lead_user):
    client.force_login(lead_user)
    response = client.post("/projects/new/", {"name": "keep-me", "title": "Kept", "set_size": "2",
                                              "overlap_per_set": "4", "overlap_mode": "inter"})
    html = response.content.decode()
    assert response.status_code == 400 and "cannot exceed the pairs per set" in html
    assert 'value="keep-me"' in html and 'value="Kept"' in html and not Project.objects.filter(name="keep-me").exists()


def test_lead_creates_an_annotator_account_and_removes_a_member(lead_client, annotators):
    client, project, _ = lead_client
    client.post(f"/projects/{project.pk}/members/new-account/", {"username": "newbie", "password": "long enough pw 1"})
    user = get_user_model().objects.get(username="newbie")
    assert "annotator" in user_roles(user) and Membership.objects.filter(project=project, user=user).exists()
    weak = client.post(f"/projects/{project.pk}/members/new-account/", {"username": "weak", "password": "1"}, follow=True)
    assert "Password not accepted" in weak.content.decode()
    page = client.post(f"/projects/{project.pk}/members/{annotators[0].pk}/remove/", follow=True)
    assert "removed from the project" in page.content.decode()
    assert not Membership.objects.filter(project=project, user=annotators[0]).exists()
    owner = client.post(f"/projects/{project.pk}/members/{project.owner_id}/remove/", follow=True)
    assert "owner cannot be removed" in owner.content.decode()


def test_only_leads_use_the_lead_tools(client, small_project, annotators):
    project, _ = small_project
    client.force_login(annotators[0])
    for url in (f"/projects/{project.pk}/settings/", f"/projects/{project.pk}/members/new-account/",
                f"/projects/{project.pk}/invitations/", f"/projects/{project.pk}/members/{annotators[1].pk}/remove/"):
        assert client.post(url, {"username": "x", "password": "long enough pw 1"}).status_code == 403
    assert Membership.objects.filter(project=project, user=annotators[1]).exists()


def test_invitation_link_creates_an_account_and_membership_once(lead_client, client_factory=None):
    client, project, _ = lead_client
    client.post(f"/projects/{project.pk}/invitations/", {"days": "7", "max_uses": "1"})
    invitation = Invitation.objects.get(project=project)
    assert invitation.token in client.get(f"/projects/{project.pk}/").content.decode()
    client.logout()
    page = client.get(f"/invite/{invitation.token}/")
    assert page.status_code == 200 and "Create my account and join" in page.content.decode()
    done = client.post(f"/invite/{invitation.token}/", {"username": "guest", "password": "long enough pw 2"})
    assert done.status_code == 302
    guest = get_user_model().objects.get(username="guest")
    assert Membership.objects.filter(project=project, user=guest, role="annotator").exists()
    assert "annotator" in user_roles(guest)
    client.logout()
    used = client.get(f"/invite/{invitation.token}/")
    assert used.status_code == 410 and "used already" in used.content.decode()
    unknown = client.get("/invite/nope/")
    assert unknown.status_code == 404 and "not valid" in unknown.content.decode()


def test_closing_a_batch_confirms_and_says_so(lead_client):
    client, project, batch = lead_client
    html = client.get(f"/projects/{project.pk}/").content.decode()
    assert f"Close batch {batch.name}?" in html and "forms.js" in html
    page = client.post(f"/projects/{project.pk}/batches/{batch.pk}/status/", {"status": "closed"}, follow=True)
    assert "is now closed" in page.content.decode()
    assert Batch.objects.get(pk=batch.pk).status == "closed"


def test_a_logged_in_user_joins_by_invitation_and_withdrawn_links_stop_working(lead_client, make_user):
    client, project, _ = lead_client
    client.post(f"/projects/{project.pk}/invitations/", {"days": "3", "max_uses": "2"})
    invitation = Invitation.objects.get(project=project)
    researcher = make_user("resq", "researcher")
    client.force_login(researcher)
    page = client.get(f"/invite/{invitation.token}/")
    assert "You are logged in as" in page.content.decode()
    assert client.post(f"/invite/{invitation.token}/").status_code == 302
    assert Membership.objects.filter(project=project, user=researcher, role="annotator").exists()
    assert "annotator" in user_roles(get_user_model().objects.get(pk=researcher.pk))
    client.force_login(project.owner)
    client.post(f"/projects/{project.pk}/invitations/{invitation.pk}/revoke/")
    client.logout()
    page = client.get(f"/invite/{invitation.token}/")
    assert page.status_code == 410 and "withdrawn" in page.content.decode()
    bad = client.post(f"/projects/{project.pk}/invitations/", {"days": "x"})
    assert bad.status_code == 302  # anonymous: to the login page, nothing created
    assert Invitation.objects.filter(project=project).count() == 1


def test_attention_checks_from_the_project_page(lead_client):
    from annotation.models import Pair

    client, project, batch = lead_client
    page = client.post(f"/projects/{project.pk}/batches/{batch.pk}/attention/", {"build": "2"}, follow=True)
    assert "2 attention check(s) added" in page.content.decode()
    page = client.post(f"/projects/{project.pk}/batches/{batch.pk}/attention/",
                       {"answer_id": "100 3", "other_id": "100 4"}, follow=True)
    assert "Known-answer pair added" in page.content.decode()
    assert Pair.objects.filter(batch=batch, attention_answer__isnull=False).count() == 3
    page = client.post(f"/projects/{project.pk}/batches/{batch.pk}/attention/",
                       {"answer_id": "100 3", "other_id": "nope"}, follow=True)
    assert "No check added" in page.content.decode() and "Not among the project" in page.content.decode()


def test_lead_renames_and_deletes_batches_and_is_told_what_is_kept(lead_client, annotators):
    import uuid

    from annotation.models import Batch, Judgement, Verse
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create
    from annotation.services.scheduling import set_next

    client, project, batch = lead_client
    renamed = client.post(f"/projects/{project.pk}/batches/{batch.pk}/rename/", {"name": "first reference"}, follow=True)
    assert "is now called first reference" in renamed.content.decode()
    assert Batch.objects.get(pk=batch.pk).name == "first reference"
    other = batch_create(project=project, reference_id="100 1", candidate_ids=["100 2", "100 3"], name="spare")
    clash = client.post(f"/projects/{project.pk}/batches/{other.pk}/rename/", {"name": "first reference"}, follow=True)
    assert "has a batch named" in clash.content.decode() and Batch.objects.get(pk=other.pk).name == "spare"
    empty = client.post(f"/projects/{project.pk}/batches/{batch.pk}/rename/", {"name": ""})
    assert empty.status_code == 400 and "name" in empty.content.decode()
    # a batch with judgements is kept (close it instead); one without is deleted, its verses stay
    item = set_next(batch=batch, annotator=annotators[0]).assignments.select_related("pair").first()
    judgement_submit(annotator=annotators[0], assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                     client_uuid=uuid.uuid4())
    kept = client.post(f"/projects/{project.pk}/batches/{batch.pk}/delete/", follow=True).content.decode()
    assert "never deleted; close the batch instead" in kept and Batch.objects.filter(pk=batch.pk).exists()
    assert Judgement.objects.filter(batch=batch).count() == 1
    n_verses = Verse.objects.filter(project=project).count()
    gone = client.post(f"/projects/{project.pk}/batches/{other.pk}/delete/", follow=True).content.decode()
    assert "deleted with its 1 pair(s)" in gone and "its verses stay" in gone
    assert not Batch.objects.filter(pk=other.pk).exists() and Verse.objects.filter(project=project).count() == n_verses
