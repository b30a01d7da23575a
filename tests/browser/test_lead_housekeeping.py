"""One full housekeeping path in a real browser: from the project page a lead finds a verse, renames it, deletes
it after reading what goes and what is kept, then archives the project."""
import json
from pathlib import Path

import pytest

from annotation.models import Project, Verse
from annotation.services.projects import batch_create, project_create, verses_import

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def test_find_rename_delete_a_verse_and_archive_the_project(live_server, page, make_user):
    lead = make_user("hlead", "lead")
    project = project_create(owner=lead, name="house")
    verses = [{"verse_id": f"8 {k}", "text": f"στίχος {k}"} for k in range(5)] + [{"verse_id": "stray", "text": "λάθος"}]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json", create_batches=False)
    batch_create(project=project, reference_id="8 0", candidate_ids=["8 1", "8 2"])
    login(page, live_server.url, "hlead", "pw-hlead")
    page.goto(f"{live_server.url}/projects/{project.pk}/")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#study").screenshot(path=str(SHOTS / "lead-study-card.png"))
    page.click("#verses-link")
    page.fill("#vl-q", "λάθ")
    page.keyboard.press("Enter")
    page.wait_for_selector("#verse-table:has-text('stray')")
    assert page.locator("#verse-table tbody tr").count() == 1
    page.click("#verse-table a:has-text('stray')")
    page.fill("#vr-id", "8 99")
    page.click("#vr-save")
    page.wait_for_selector(".messages:has-text('Verse stray is now 8 99')")
    page.click("#verse-delete")
    assert "Verse 8 99: its text" in page.inner_text("#confirm-goes")
    assert "Every other verse" in page.inner_text("#confirm-stays")
    page.locator("#confirm").screenshot(path=str(SHOTS / "lead-confirm-delete-verse.png"))
    page.click("#confirm-button")
    page.wait_for_selector(".messages:has-text(\"Verse '8 99' deleted.\")")
    assert not Verse.objects.filter(project=project, verse_id__in=["stray", "8 99"]).exists()

    page.goto(f"{live_server.url}/projects/{project.pk}/")
    page.click("#project-archive")
    assert "exports" in page.inner_text("#confirm-stays")
    page.click("#confirm-button")
    page.wait_for_selector("#archived-tag")
    assert Project.objects.get(pk=project.pk).archived_at is not None
