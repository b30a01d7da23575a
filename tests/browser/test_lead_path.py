"""A lead's whole path in a real browser, without the admin site: create a project, add an
annotator (account and invitation), upload verses, make a batch, close/reopen it with confirmation,
watch progress, recompute, read the dashboard (whose figures explain themselves), export; error
pages in the layout; and every page at a 375 px viewport without horizontal overflow."""
import uuid

import pytest
from django.utils import timezone

from annotation.models import Batch, Invitation, Project
from annotation.services.judgements import judgement_submit
from annotation.services.scheduling import set_next

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VERSES = "verse_id,text\n" + "".join(f"500 {k},στίχος {'αβγδεζηθ'[k % 8]} {k}\n" for k in range(1, 9))


def _judge(batch, user, sets=2):
    for _ in range(sets):
        annotation_set = set_next(batch=batch, annotator=user)
        if annotation_set is None:
            return
        for item in annotation_set.assignments.select_related("pair"):
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=min(item.pair.verse_a_id,
                             item.pair.verse_b_id), client_uuid=uuid.uuid4())


def test_lead_runs_a_project_alone(live_server, page, make_user, tmp_path):
    make_user("blead", "lead")
    base = live_server.url
    console_errors = []
    page.on("console", lambda msg: console_errors.append(msg.text) if msg.type == "error" else None)
    login(page, base, "blead", "pw-blead")
    page.goto(f"{base}/projects/")
    assert page.evaluate("document.querySelector('#p-name').checkValidity() === false")  # empty: the check is on
    page.fill("#p-name", "bad name")
    assert page.evaluate("document.querySelector('#p-name').validity.patternMismatch")
    assert not [e for e in console_errors if "pattern" in e.lower()]  # the pattern compiles in this Chromium
    page.fill("#p-name", "path-test")
    page.fill("#p-title", "Path test")
    page.fill("#p-overlap", "2")
    page.click("#new-project button[type=submit]")
    page.wait_for_selector("h1:has-text('Path test')")
    project = Project.objects.get(name="path-test")
    assert page.is_visible(".mainnav a[data-role='lead']")  # the menu is not lost on the project page
    # an annotator account, made here
    page.fill("#a-user", "bann")
    page.fill("#a-pw", "a long password 7")
    page.click("form[action$='/members/new-account/'] button")
    page.wait_for_selector(".messages:has-text('Account bann created')")
    # verses, then a batch of all other verses
    csv = tmp_path / "verses.csv"
    csv.write_text(VERSES, encoding="utf-8")
    page.set_input_files("#v-file", str(csv))
    page.click("form[action$='/verses/upload/'] button")
    page.wait_for_selector(".messages:has-text('Imported 8 new verse(s)')")
    page.fill("#b-ref", "500 1")  # the verse picker's input takes a typed id as it is
    page.check("input[name=all_others]")
    page.click("form[action$='/batches/new/'] button")
    page.wait_for_selector(".messages:has-text('created with 21 pairs')")
    batch = Batch.objects.get(project=project)
    # closing asks first: dismiss keeps it open, accept closes; then reopen
    page.once("dialog", lambda d: d.dismiss())
    page.click(f"form[action$='/batches/{batch.pk}/status/'] button")
    page.wait_for_timeout(300)
    assert Batch.objects.get(pk=batch.pk).status == "open"
    page.once("dialog", lambda d: d.accept())
    page.click(f"form[action$='/batches/{batch.pk}/status/'] button")
    page.wait_for_selector(".messages:has-text('is now closed')")
    page.once("dialog", lambda d: d.accept())
    page.click(f"form[action$='/batches/{batch.pk}/status/'] button")
    page.wait_for_selector(".messages:has-text('is now open')")
    # settings and instructions
    page.fill("#s-instr", "Choose the verse closer in meaning to the reference.\nExample: …")
    page.fill("#s-overlap", "11")  # more than the 10 pairs per set
    page.click("#settings button[type=submit]")
    page.wait_for_selector(".messages:has-text('cannot exceed the pairs per set')")
    page.fill("#s-overlap", "2")
    page.fill("#s-instr", "Choose the verse closer in meaning to the reference.\nExample: …")
    page.click("#settings button[type=submit]")
    page.wait_for_selector(".messages:has-text('Settings saved.')")
    # an invitation link, used by someone new in another browser context
    page.click("form[action$='/invitations/'] button")
    page.wait_for_selector(".messages:has-text('Invitation link created')")
    link = page.input_value(".invite-link")
    other = page.context.browser.new_context(viewport={"width": 375, "height": 800})
    guest = other.new_page()
    guest.goto(link)
    guest.fill("#inv-user", "bguest")
    guest.fill("#inv-pw", "another long pw 8")
    guest.click("button[type=submit]")
    guest.wait_for_selector(".messages:has-text('You joined Path test')")
    assert guest.is_visible(f"a[href='/annotate/{batch.pk}/']")
    guest.goto(f"{base}/annotate/{batch.pk}/")
    guest.wait_for_selector("#instructions[open]")
    assert "closer in meaning" in guest.inner_text("#instructions")
    other.close()
    assert Invitation.objects.get(project=project).uses == 1
    # progress, recompute, dashboard
    from django.contrib.auth import get_user_model

    for name in ("bann", "bguest"):
        _judge(batch, get_user_model().objects.get(username=name))
    page.goto(f"{base}/projects/{project.pk}/")
    assert page.inner_text("#progress tbody tr td.num >> nth=3").strip() != "0"
    page.click("text=Agreement & scores dashboard")
    page.click("text=Recompute now")
    page.wait_for_selector("#kendall-u")
    page.wait_for_selector("#progress-counts[aria-busy='false'] table")  # the counts arrive by fetch
    assert page.inner_text("#progress-counts tbody tr td.num >> nth=2").strip().split(" / ")[0] != "0"
    top = page.inner_text(".top-five")
    assert "strength" in top and page.is_visible("h3:has-text('Top five by Bradley–Terry strength')")
    for text in ("What these say", "Paper-comparable figures", "Expected at random", "Split-half reliability"):
        assert page.locator(f"text={text}").count() >= 1
    assert page.locator("h3:has-text('Test–retest agreement')").count() == 0  # inter mode, no repeats
    # export
    with page.expect_download() as download:
        page.click("text=judgements CSV")
    with open(download.value.path(), encoding="utf-8-sig") as fh:
        header = fh.readline()
    assert "oriented_a_id" in header and "orientation" in header


def test_dashboard_shows_the_new_result_when_its_job_finishes(live_server, page, make_user):
    from annotation import analytics
    from annotation.services.projects import project_create
    from jobs.models import Job

    lead = make_user("rlead", "lead")
    project = project_create(owner=lead, name="reload")
    job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk}, owner=lead,
                             status=Job.Status.RUNNING, started=timezone.now())
    login(page, live_server.url, "rlead", "pw-rlead")
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector("#running")
    assert page.locator("text=Not computed yet").count() == 1
    Job.objects.filter(pk=job.pk).update(status=Job.Status.SUCCEEDED, finished=timezone.now(), progress=1.0,
                                         result=analytics.project_report(project, n_boot=0))
    page.wait_for_selector("text=Last computed", timeout=60000)  # no manual reload
    assert page.locator("#running").count() == 0
    page.goto(f"{live_server.url}/jobs/")
    assert "UTC" in page.inner_text(f"tr[data-job='{job.pk}'] td.finished")


def test_error_pages_are_in_the_layout_with_the_reason(live_server, page, make_user):
    from annotation.services.projects import project_create

    lead = make_user("elead", "lead")
    make_user("eann", "annotator")
    project = project_create(owner=lead, name="err")
    login(page, live_server.url, "eann", "pw-eann")
    response = page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    assert response.status == 403
    assert "leads and researchers can see the dashboard" in page.inner_text(".reason")
    assert page.is_visible(".topbar")
    response = page.goto(f"{live_server.url}/no/such/page/")
    assert response.status == 404 and "There is no page at this address." in page.inner_text(".reason")


def _pages(project, batch, job_id):
    p = project.pk
    return ["/", "/projects/", f"/projects/{p}/", f"/projects/{p}/dashboard/", f"/projects/{p}/planning/",
            "/jobs/", f"/jobs/{job_id}/", "/no/such/page/"]


def test_every_page_fits_a_375_px_screen(live_server, browser, make_user):
    from annotation import analytics
    from annotation.services.projects import (
        batch_create,
        membership_add,
        project_create,
        verses_import,
    )
    from jobs.models import Job

    lead = make_user("wlead", "lead", "annotator")
    project = project_create(owner=lead, name="narrow-screen-project-with-a-long-name")
    verses_import(project=project, data=VERSES.encode(), filename="v.csv")
    membership_add(project=project, username=lead.username)
    batch = batch_create(project=project, reference_id="500 1", candidate_ids=[f"500 {k}" for k in range(2, 9)],
                         name="a batch with a rather long name for a narrow screen")
    ann = make_user("wann", "annotator")
    membership_add(project=project, username=ann.username)
    _judge(batch, ann, sets=3)
    _judge(batch, lead, sets=2)
    job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk}, owner=lead,
                             status=Job.Status.SUCCEEDED, finished=timezone.now(),
                             result=analytics.project_report(project, n_boot=20))
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    login(page, live_server.url, "wlead", "pw-wlead")
    too_wide = {}
    for path in _pages(project, batch, job.pk) + [f"/annotate/{batch.pk}/"]:
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 375:
            too_wide[path] = width
    context.close()
    assert too_wide == {}
