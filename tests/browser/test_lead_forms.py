"""A refused form on the lead's project page, in a real browser: the page comes back with the field's error
inside the form the lead used, what they typed is still there, and nothing was created."""
import json

import pytest

from annotation.models import Batch
from annotation.services.projects import project_create, verses_import

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_refused_batch_form_shows_its_error_and_keeps_the_typing(live_server, page, make_user):
    lead = make_user("flead", "lead")
    project = project_create(owner=lead, name="forms-test")
    verses = [{"verse_id": f"7 {k}", "text": f"στίχος {k}"} for k in range(4)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json", create_batches=False)
    login(page, live_server.url, "flead", "pw-flead")
    page.goto(f"{live_server.url}/projects/{project.pk}/")
    typed = "7 1, 7 2\n" + "z" * 80
    page.fill("#b-ref", "7 0")  # the reference picker's input (a drop-down once, which had a first verse chosen)
    page.fill("#b-cands", typed)
    page.fill("#b-name", "my batch")
    page.click("form[action$='/batches/new/'] button")
    error = page.wait_for_selector("form[action$='/batches/new/'] .errorlist[role=alert]")
    assert "longer than a verse id can be" in error.inner_text()
    assert page.input_value("#b-cands") == typed and page.input_value("#b-name") == "my batch"
    assert page.locator(".errorlist").count() == 1  # only the form that was used says something
    assert not Batch.objects.filter(project=project).exists()
    page.fill("#b-cands", "7 1, 7 2, 7 3")
    # what the page shows while the answer is on its way (forms.js), kept across the navigation in sessionStorage
    page.evaluate("""document.addEventListener("submit", (ev) => setTimeout(() => sessionStorage.setItem("shown",
        ev.target.getAttribute("aria-busy") + " " + ev.submitter.disabled + " " + ev.submitter.textContent)))""")
    page.click("form[action$='/batches/new/'] button")
    page.wait_for_selector(".messages:has-text('Batch my batch created with 3 pairs')")
    assert page.evaluate("sessionStorage.getItem('shown')") == "true true Working…"
    assert page.locator(".errorlist").count() == 0
