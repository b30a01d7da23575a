"""Chaos on the annotator page (issue 10 §1): a network that drops requests, drops answers after the
server acted, and delays requests at random (fixed seed), while annotators double-click, press keys
25 ms apart, undo, reload mid-set and log out for another person to log in, in one browser.

At the end the database holds exactly the choices each user saw confirmed: every judgement or undo
answered 2xx to the page counts, in the order the page received the answers; nothing more, nothing
fewer. The figures are printed (run with -s) and quoted in the README."""
import json
import os
import random
import time
from collections import Counter

import pytest
from playwright.sync_api import Error as PlaywrightError

from annotation.models import Judgement

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SEED = int(os.environ.get("SIMILIA_CHAOS_SEED", "20260"))  # the figures in the README are for 20260
ACTIONS = 45
USERS = ["chaos1", "chaos2", "chaos3"]


@pytest.fixture
def chaos_batch(make_user):
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    lead = make_user("chaoslead", "lead")
    project = project_create(owner=lead, name="chaos", set_size=4, overlap_per_set=1, session_minutes=None)
    verses = [{"verse_id": f"500 {k}", "text": f"στίχος {k}"} for k in range(10)]
    verses_import(project=project, data=json.dumps(verses).encode())
    for name in USERS:
        make_user(name, "annotator")
        membership_add(project=project, username=name)
    return batch_create(project=project, reference_id="500 0", candidate_ids=[f"500 {k}" for k in range(1, 10)], seed=11)


class Network:
    """Route handler for /api/v1/: drop the request, let the server act and drop its answer, delay,
    or pass. Delayed requests are released by `pump`, from the test's thread, so nothing blocks."""

    def __init__(self, rng: random.Random):
        self.rng, self.held, self.calm, self.stats = rng, [], False, Counter()

    def handle(self, route):
        roll = 1.0 if self.calm else self.rng.random()
        if roll < 0.12:
            self.stats["requests dropped"] += 1
            route.abort()
        elif roll < 0.24:
            answer = route.fetch()
            self.stats["answers dropped after the server acted"] += answer.ok
            self.stats["answers dropped after a refusal"] += not answer.ok
            route.abort()
        elif roll < 0.50:
            self.stats["requests delayed"] += 1
            self.held.append((time.monotonic() + self.rng.uniform(0.05, 1.2), route))
        else:
            route.continue_()

    def release(self, everything: bool = False) -> None:
        now = time.monotonic()
        due = [item for item in self.held if everything or item[0] <= now]
        self.held = [item for item in self.held if item not in due]
        for _, route in due:
            route.continue_()


class Oracle:
    """What the page was told: judgements answered 2xx, minus undos answered 2xx, per user."""

    def __init__(self):
        self.live, self.user, self.refused = {}, None, []

    def on_response(self, response):
        request = response.request
        if request.method != "POST" or "/api/v1/" not in request.url:
            return
        body = request.post_data_json or {}
        if request.url.endswith("/api/v1/judgements/"):
            if response.ok:
                self.live[body["client_uuid"]] = self.user
            else:
                self.refused.append((response.status, response.text()))
        elif request.url.endswith("/undo/"):
            if response.ok:
                self.live.pop(body["client_uuid"], None)
            else:
                self.refused.append((response.status, response.text()))


def test_chaos_every_confirmed_choice_and_nothing_else_is_stored(live_server, browser, chaos_batch):
    rng = random.Random(SEED)
    network, oracle, done = Network(random.Random(SEED + 1)), Oracle(), Counter()
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.route("**/api/v1/**", network.handle)
    page.on("response", oracle.on_response)
    # Leaving with unsent choices: yes (they stay queued for this user); logging out and losing them: no.
    page.on("dialog", lambda d: d.accept() if d.type == "beforeunload" else d.dismiss())
    url = f"{live_server.url}/annotate/{chaos_batch.pk}/"

    def pump(ms: float) -> None:
        end = time.monotonic() + ms / 1000
        while time.monotonic() < end:
            network.release()
            page.wait_for_timeout(15)

    def sign_in(name: str) -> None:
        oracle.user = name
        login(page, live_server.url, name, f"pw-{name}")
        page.goto(url)

    def probe(script: str):
        try:
            return page.evaluate(script)
        except PlaywrightError:  # the page is navigating (a logout on its way)
            return None

    def ready(wait_ms: float = 2000) -> bool:
        end = time.monotonic() + wait_ms / 1000
        while not probe("!!document.querySelector('#choices[data-ready]')"):
            if time.monotonic() > end:
                return False
            pump(30)
        return True

    seen = set()  # (user, the two verses on screen) before each choice

    def look() -> None:
        verses = [page.get_attribute(f"#choice-{side}", "data-verse") for side in ("left", "right")]
        seen.add((oracle.user, frozenset(int(v) for v in verses)))

    sign_in(USERS[0])
    for step in range(ACTIONS):
        pump(rng.uniform(20, 200))
        roll = rng.random()
        if step in (10, 40):
            roll = 0.0  # a reload
        elif step in (25, 50):
            roll = 0.07  # a logout
        if "/login/" in page.url:  # a logout went through: the next person
            sign_in(rng.choice([u for u in USERS if u != oracle.user]))
            done["logins"] += 1
        elif roll < 0.06:
            try:
                page.reload()
                done["reloads mid-set"] += 1
            except PlaywrightError:  # a navigation (a logout) overtook it
                pass
        elif roll < 0.11:
            probe("document.querySelector('form.logout button').click()")  # sends the queue first; refused to lose it (dialog dismissed)
            done["logout attempts"] += 1
        elif roll < 0.17:
            if probe("(() => { const b = document.getElementById('undo'); return b && !b.disabled; })()"):
                page.keyboard.press("u")
                done["undos"] += 1
        elif probe("(() => { const b = document.getElementById('next-set'); return b && !b.disabled && !document.getElementById('set-done').hidden; })()"):
            page.keyboard.press("Enter")
            done["next sets"] += 1
        elif ready():
            look()
            kind = rng.random()
            if kind < 0.2:
                page.dblclick(f"#choice-{rng.choice(['left', 'right'])}")
                done["double clicks"] += 1
            elif kind < 0.4:
                key = rng.choice(["ArrowLeft", "ArrowRight"])
                page.keyboard.press(key)
                page.wait_for_timeout(25)
                page.keyboard.press(key)
                done["key presses 25 ms apart"] += 1
            else:
                page.keyboard.press(rng.choice(["ArrowLeft", "ArrowRight"]))
                done["single choices"] += 1

    # Calm: the network heals, the page sends what it holds, the current user logs out cleanly.
    network.calm = True
    network.release(everything=True)
    page.wait_for_timeout(500)
    if "/login/" in page.url:
        sign_in(oracle.user)
    page.wait_for_selector("#unsent[hidden]", state="attached", timeout=30000)
    page.click("form.logout button")
    page.wait_for_url("**/login/**")
    context.close()

    stored = {str(u): name for u, name in Judgement.objects.filter(undone_at__isnull=True)
              .values_list("client_uuid", "annotator__username")}
    lost = {u: n for u, n in oracle.live.items() if stored.get(u) != n}
    extra = {u: n for u, n in stored.items() if oracle.live.get(u) != n}
    figures = dict(done, **network.stats, confirmed=len(oracle.live), stored=len(stored),
                   refused=len(oracle.refused), lost=len(lost), extra=len(extra))
    print("chaos figures:", json.dumps(figures, sort_keys=True))
    assert lost == {} and extra == {}, figures
    assert oracle.refused == [], (oracle.refused, figures)
    assert len(stored) >= 10 and done["logins"] >= 1 and done["reloads mid-set"] >= 1, figures
    assert network.stats["answers dropped after the server acted"] >= 2, figures
    judged = list(Judgement.objects.filter(undone_at__isnull=True).values_list(
        "annotator__username", "pair_id", "pair__verse_a_id", "pair__verse_b_id"))
    assert len({(name, pair) for name, pair, _, _ in judged}) == len(judged)  # nobody judged a pair twice
    unseen = [row for row in judged if (row[0], frozenset(row[2:])) not in seen]
    assert unseen == [], "judgements of pairs the annotator never saw"
