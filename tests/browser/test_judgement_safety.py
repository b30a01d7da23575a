"""The annotator page never claims a choice is saved before the server has it, takes one choice per
pair shown, keeps each user's unsent choices apart and shows what the server refused (issue 10 §1)."""
import json

import pytest

from annotation.models import Judgement, Pair
from annotation.services.projects import membership_add
from annotation.services.scheduling import set_next

from .conftest import login
from .test_annotator_page import greek_project  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
JUDGEMENTS = "**/api/v1/judgements/"
BEFOREUNLOAD_BLOCKS = """() => { const e = new Event('beforeunload', {cancelable: true});
                                 window.dispatchEvent(e); return e.defaultPrevented; }"""


def _open(page, base_url, batch, username):
    login(page, base_url, username, f"pw-{username}")
    page.goto(f"{base_url}/annotate/{batch.pk}/")
    page.wait_for_selector("#choices[data-ready]", timeout=60000)


def _shown_pair(page, batch):
    left = int(page.get_attribute("#choice-left", "data-verse"))
    right = int(page.get_attribute("#choice-right", "data-verse"))
    return Pair.objects.get(batch=batch, verse_a_id=min(left, right), verse_b_id=max(left, right))


def test_set_complete_only_once_the_server_has_every_choice(live_server, page, greek_project):  # noqa: F811
    batch, annotator = greek_project
    held, hold = [], [True]
    page.route(JUDGEMENTS, lambda route: held.append(route) if hold[0] else route.continue_())
    _open(page, live_server.url, batch, "gann")
    for _ in range(5):
        page.wait_for_selector("#choices[data-ready]")
        page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#set-done:not([hidden])")
    body = page.inner_text("#annotator")
    assert "saved." not in body and "Set complete" not in body, body
    assert page.inner_text("#set-done-title") == "Saving your choices…"
    assert page.inner_text("#unsent-count") == "5" and page.is_visible("#unsent")
    assert page.is_disabled("#next-set")
    assert page.evaluate(BEFOREUNLOAD_BLOCKS) is True
    assert not Judgement.objects.exists() and len(held) == 1  # one request at a time, in order

    hold[0] = False
    for route in held:
        route.continue_()
    page.wait_for_selector("#set-done-title:has-text('Set complete')")
    assert "All pairs of this set are saved." in page.inner_text("#set-done-state")
    assert page.is_hidden("#unsent") and page.inner_text("#save-state") == "All choices saved."
    assert page.evaluate(BEFOREUNLOAD_BLOCKS) is False
    assert Judgement.objects.filter(annotator=annotator, undone_at__isnull=True).count() == 5


def test_double_click_and_quick_presses_store_one_choice_on_the_pair_shown(live_server, page, greek_project):  # noqa: F811
    batch, annotator = greek_project
    posted = []
    page.on("request", lambda r: posted.append(r.post_data_json) if r.url.endswith("/api/v1/judgements/") else None)
    _open(page, live_server.url, batch, "gann")
    first = _shown_pair(page, batch)
    page.dblclick("#choice-left")
    page.wait_for_selector("#choices[data-ready]")
    second = _shown_pair(page, batch)
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(25)
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(25)
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    page.wait_for_timeout(400)  # a third choice, if one slipped through, would be sent by now
    live = list(Judgement.objects.filter(annotator=annotator, undone_at__isnull=True).order_by("id"))
    assert [(j.pair_id, j.chosen_id) for j in live] == [
        (first.pk, int(posted[0]["chosen_verse"])), (second.pk, int(posted[1]["chosen_verse"]))]
    assert live[0].chose_left is True and live[1].chose_left is False
    assert [body["pair_id"] for body in posted] == [first.pk, second.pk]  # the pair shown goes with the choice
    assert page.inner_text("#pair-counter") == "Pair 3 of 5"


def test_logout_clears_the_queue_and_the_next_person_is_never_blocked(live_server, page, greek_project, make_user):  # noqa: F811
    batch, first = greek_project
    second = make_user("gann2", "annotator")
    membership_add(project=batch.project, username=second.username)
    page.route(JUDGEMENTS, lambda route: route.abort())  # the connection is gone for the first person
    _open(page, live_server.url, batch, "gann")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#unsent:not([hidden])")
    assert page.inner_text("#unsent-count") == "1"
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    page.click("form.logout button")
    page.wait_for_url(f"{live_server.url}/login/**")
    assert "could not be saved yet" in dialogs[0]
    leftovers = page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('similia-'))")
    assert leftovers == []

    page.unroute(JUDGEMENTS)
    posted = []
    page.on("request", lambda r: posted.append(r.post_data_json) if r.url.endswith("/api/v1/judgements/") else None)
    _open(page, live_server.url, batch, "gann2")  # within 10 s, not "Loading…" forever
    assert page.inner_text("#pair-counter").startswith("Pair 1 of")
    assert posted == [] and not Judgement.objects.exists()
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    assert list(Judgement.objects.values_list("annotator__username", flat=True)) == ["gann2"]


def test_refused_choices_are_set_aside_with_their_reason(live_server, page, greek_project, make_user):  # noqa: F811
    """A choice resent after its undo (409) and one for another person's pair (403): both are shown
    with the server's reason, neither blocks the page, and nothing is stored."""
    batch, annotator = greek_project
    other = make_user("gann3", "annotator")
    membership_add(project=batch.project, username=other.username)
    foreign = set_next(batch=batch, annotator=other).assignments.select_related("pair").first()
    posted = []
    page.on("request", lambda r: posted.append(r.post_data_json) if r.url.endswith("/api/v1/judgements/") else None)
    _open(page, live_server.url, batch, "gann")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    page.keyboard.press("u")
    page.wait_for_selector("#save-state:has-text('undone')")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    set_id = Judgement.objects.get(client_uuid=posted[0]["client_uuid"]).set_id
    replay = dict(posted[0], kind="choice", set_id=set_id, sent=True)
    stranger = {"kind": "choice", "set_id": foreign.set_id, "assignment_id": foreign.pk, "pair_id": foreign.pair_id,
                "chosen_verse": foreign.pair.verse_a_id, "client_uuid": "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
                "response_ms": 900, "sent": False}
    queue = json.dumps([replay, stranger])
    page.evaluate(f"""() => {{
        localStorage.setItem('similia-queue-u{annotator.pk}-b{batch.pk}', {json.dumps(queue)});
        localStorage.setItem('similia-pending-{batch.pk}', {json.dumps(queue)});  // the old page's key
    }}""")
    page.on("dialog", lambda d: d.accept())
    page.reload()
    page.wait_for_selector("#refused:not([hidden]) li:nth-child(2)", timeout=60000)
    reasons = page.inner_text("#refused-list")
    assert "was undone" in reasons and "not assigned to you" in reasons, reasons
    page.wait_for_selector("#choices[data-ready]")
    assert page.inner_text("#pair-counter") == "Pair 1 of 5" and page.is_hidden("#unsent")
    assert not Judgement.objects.filter(undone_at__isnull=True).exists()
    page.click("#dismiss-refused")
    assert page.is_hidden("#refused")


def test_the_page_keeps_working_while_the_server_is_unreachable(live_server, page, greek_project):  # noqa: F811
    """An outage (every request to the server refused, as when the web process or its database is down): the
    annotator keeps choosing, the page shows "n unsent — will retry" and loses nothing; once the server is back the
    queue is sent in order, each choice stored once."""
    batch, annotator = greek_project
    _open(page, live_server.url, batch, "gann")
    page.route("**/*", lambda route: route.abort("connectionrefused"))  # the server is gone
    for _ in range(3):
        page.wait_for_selector("#choices[data-ready]")
        page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#unsent:not([hidden])")
    page.wait_for_function("document.querySelector('#unsent-count').textContent === '3'")
    assert page.inner_text("#unsent") == "3 unsent — will retry"
    assert "retrying" in page.inner_text("#save-state").lower()
    assert not Judgement.objects.exists()
    page.unroute("**/*")  # the server is back: the page's own retry sends the queue
    page.wait_for_selector("#unsent", state="hidden", timeout=30000)
    assert Judgement.objects.filter(annotator=annotator, undone_at__isnull=True).count() == 3
    assert Judgement.objects.values("pair_id").distinct().count() == 3
