"""Bad values on the project page's forms and the invitation page: the page comes back (400) with the field's
error next to the form and what was typed kept, nothing is written, and never a 500 (annotation/forms.py)."""
import html

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Batch, Invitation, Membership, Pair, Project

pytestmark = pytest.mark.django_db


def _refused(response, *texts):
    page = html.unescape(response.content.decode())
    assert response.status_code == 400, response.status_code
    assert 'class="errorlist error" role="alert"' in page
    for text in texts:
        assert text in page, text
    return page


def test_member_add_needs_a_username_and_a_known_role(lead_client):
    client, project, _ = lead_client
    before = Membership.objects.filter(project=project).count()
    _refused(client.post(f"/projects/{project.pk}/members/", {"username": "", "role": "annotator"}),
             "Username: This field is required.")
    page = _refused(client.post(f"/projects/{project.pk}/members/", {"username": "ann1", "role": "boss"}),
                    "Role: Select a valid choice. boss is not one of the available choices.")
    assert 'id="m-user" type="text" name="username" required maxlength="150" value="ann1"' in page
    assert Membership.objects.filter(project=project).count() == before
    unknown = client.post(f"/projects/{project.pk}/members/", {"username": "nobody-here"}, follow=True)
    assert "No user named &#x27;nobody-here&#x27;" in unknown.content.decode()  # the service's rule, as before


def test_batch_create_refuses_junk_candidates_and_keeps_what_was_typed(lead_client):
    client, project, _ = lead_client
    url = f"/projects/{project.pk}/batches/new/"
    junk = "100 1\n" + "x" * 300
    page = _refused(client.post(url, {"reference_id": "100 0", "candidate_ids": junk, "name": "kept name"}),
                    "Candidate verse ids: 1 id(s) are longer than a verse id can be (64 characters)")
    assert "kept name" in page and "x" * 300 in page
    _refused(client.post(url, {"reference_id": "100 0", "candidate_ids": " , \n"}),
             "Candidate verse ids: Give the candidate verse ids or use all other verses.")
    _refused(client.post(url, {"reference_id": "", "all_others": "on"}), "Reference verse: This field is required.")
    assert Batch.objects.filter(project=project).count() == 1
    unknown = client.post(url, {"reference_id": "100 0", "candidate_ids": "nope, zzz"}, follow=True)
    assert "Batch not created" in unknown.content.decode() and "not among the project" in unknown.content.decode()
    made = client.post(url, {"reference_id": "100 1", "candidate_ids": "100 2, 100 3\n100 3\n100 4", "pilot": "on"})
    assert made.status_code == 302
    batch = Batch.objects.get(project=project, name="ref 100 1")
    assert batch.n_pairs == 3 and batch.pilot


def test_batch_status_must_be_open_or_closed(lead_client):
    client, project, batch = lead_client
    _refused(client.post(f"/projects/{project.pk}/batches/{batch.pk}/status/", {"status": "deleted"}),
             "Status: Select a valid choice.")
    assert Batch.objects.get(pk=batch.pk).status == "open"


def test_verse_import_without_a_file_says_so(lead_client):
    client, project, _ = lead_client
    _refused(client.post(f"/projects/{project.pk}/verses/upload/", {"create_batches": "on"}),
             "File: Choose a file to import.")
    good = SimpleUploadedFile("v.csv", "verse_id,text\n200 1,α\n".encode())
    page = client.post(f"/projects/{project.pk}/verses/upload/", {"file": good}, follow=True)
    assert "Imported 1 new verse(s)" in page.content.decode()


def test_settings_with_bad_numbers_come_back_with_the_typed_values(lead_client):
    client, project, _ = lead_client
    url = f"/projects/{project.pk}/settings/"
    page = _refused(client.post(url, {"title": "Typed title", "set_size": "abc", "overlap_per_set": "1",
                                      "set_timeout_minutes": "20", "attention_per_set": "99",
                                      "instructions": "Typed instructions"}),
                    "Pairs per set: Enter a whole number.",
                    "Attention checks per set: Ensure this value is less than or equal to 20.")
    assert 'value="Typed title"' in page and "Typed instructions</textarea>" in page and 'value="abc"' in page
    _refused(client.post(url, {"set_size": "4", "overlap_per_set": "1", "set_timeout_minutes": "20",
                               "overlap_mode": "sideways"}), "Overlap mode: Select a valid choice.")
    project.refresh_from_db()
    assert (project.title, project.set_size, project.attention_per_set) == ("small", 4, 0)
    saved = client.post(url, {"set_size": "5", "overlap_per_set": "1", "set_timeout_minutes": "20",
                              "session_minutes": ""}, follow=True)
    assert "Settings saved." in saved.content.decode()
    project.refresh_from_db()
    assert (project.set_size, project.session_minutes, project.attention_per_set, project.overlap_mode) == (
        5, None, 0, "inter")
    assert project.instructions == Project._meta.get_field("instructions").default


def test_account_creation_needs_a_username_and_a_password(lead_client):
    client, project, _ = lead_client
    url = f"/projects/{project.pk}/members/new-account/"
    _refused(client.post(url, {"username": "", "password": "long enough pw 1"}), "Username: This field is required.")
    page = _refused(client.post(url, {"username": "keepme", "password": ""}), "Password: This field is required.")
    assert 'value="keepme"' in page
    assert not get_user_model().objects.filter(username="keepme").exists()
    done = client.post(url, {"username": "keepme", "password": "long enough pw 1"}, follow=True)
    assert "Account keepme created" in done.content.decode()


def test_invitation_numbers_are_checked_on_the_page_not_a_500(lead_client):
    client, project, _ = lead_client
    url = f"/projects/{project.pk}/invitations/"
    page = _refused(client.post(url, {"days": "abc", "max_uses": "2"}), "Valid for (days): Enter a whole number.")
    assert 'name="days" value="abc"' in page and 'name="max_uses" value="2"' in page
    _refused(client.post(url, {"days": "7", "max_uses": "-1"}),
             "People who may use it: Ensure this value is greater than or equal to 1.")
    _refused(client.post(url, {"days": "91"}), "Valid for (days): Ensure this value is less than or equal to 90.")
    assert not Invitation.objects.filter(project=project).exists()
    assert client.post(url, {"days": "", "max_uses": ""}).status_code == 302  # empty: the defaults
    invitation = Invitation.objects.get(project=project)
    assert invitation.max_uses == 1 and (invitation.expires_at - invitation.created).days in (13, 14)


def test_invitation_page_checks_the_new_account_first(lead_client):
    client, project, _ = lead_client
    client.post(f"/projects/{project.pk}/invitations/", {"days": "7", "max_uses": "1"})
    token = Invitation.objects.get(project=project).token
    client.logout()
    page = _refused(client.post(f"/invite/{token}/", {"username": "", "password": "long enough pw 2"}),
                    "Username: This field is required.")
    assert 'id="inv-pw" type="password" name="password" required' in page  # the form is still there
    _refused(client.post(f"/invite/{token}/", {"username": "u" * 151, "password": "long enough pw 2"}),
             "Username: Ensure this value has at most 150 characters (it has 151).")
    weak = client.post(f"/invite/{token}/", {"username": "keepname", "password": "1"})  # the service's rule
    assert weak.status_code == 400 and "Password not accepted" in weak.content.decode()
    assert 'value="keepname"' in weak.content.decode()
    assert Invitation.objects.get(token=token).uses == 0
    assert client.post(f"/invite/{token}/", {"username": "fine", "password": "long enough pw 2"}).status_code == 302


def test_attention_check_numbers_and_ids_are_checked(lead_client):
    client, project, batch = lead_client
    url = f"/projects/{project.pk}/batches/{batch.pk}/attention/"
    page = _refused(client.post(url, {"build": "x"}), "Built checks: Enter a whole number.")
    at = page.index(f"<strong>{batch.name}</strong>")
    assert page.index("Built checks: Enter a whole number.") > at  # shown at the batch it was for
    _refused(client.post(url, {"build": "0"}), "Built checks: Ensure this value is greater than or equal to 1.")
    _refused(client.post(url, {"answer_id": "100 3", "other_id": ""}),
             "Against verse id: Give the verse the answer is compared with.")
    assert not Pair.objects.filter(batch=batch, attention_answer__isnull=False).exists()
    page = client.post(url, {"build": ""}, follow=True)  # empty: the default five
    assert "5 attention check(s) added" in page.content.decode()
    assert Pair.objects.filter(batch=batch, attention_answer__isnull=False).count() == 5
