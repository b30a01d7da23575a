// The annotator page: serves sets from the API, records choices (click or ←/→), undo (U), next set
// (Enter).
//
// Nothing the annotator chose is lost or stored twice:
// - every choice and every undo is an operation in a queue kept in localStorage, keyed by user and
//   batch, and sent in order, one request at a time (next-set requests share that lane, so a set
//   read from the server never overtakes a choice being stored). A choice carries a client-made
//   UUID and the id of the pair shown, an undo names the UUID it takes back, so a retry after a
//   network error is applied once;
// - nothing says "saved" or "Set complete" before the server has answered for every operation; the
//   count of unsent ones is on screen and leaving the page warns while it is not zero;
// - one choice per displayed pair: input is ignored from a choice until the next pair has been
//   painted and shown for MIN_VIEW_MS (a double click or two quick key presses give one choice);
// - the server's refusals (4xx) are set aside with their reason on screen and never block the queue
//   or the next set; a lost session keeps the queue until the same user logs in again; logging out
//   sends the queue first and clears it;
// - a set on screen stops when the lead closes the batch, archives the project or turns a study step on:
//   the next choice is refused (nothing counted) and the pairs give way to why ("This project is
//   archived", "Study steps first" with a link to the study page), never to "saved".
(function () {
  "use strict";
  const root = document.getElementById("annotator");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const batchId = root.dataset.batch;
  const userId = root.dataset.user;
  const MIN_VIEW_MS = Number(root.dataset.minViewMs || 250);
  const queueKey = `similia-queue-u${userId}-b${batchId}`;
  const refusedKey = `similia-refused-u${userId}-b${batchId}`;
  let state = null;         // the last next-set payload; items carry the confirmed and the shown choice
  let shown = null;         // the item painted on screen and accepting input
  let shownAt = 0;
  let paintToken = 0;
  let lane = Promise.resolve();  // every request goes through this one lane, in order
  let flushing = null;
  let fetching = null;
  let retryTimer = null;
  let retryDelay = 1000;
  let sessionProblem = "";  // the session ended: operations wait until the same user logs in again
  let needReload = false;   // a refusal: the server's view of the set is the truth
  let wantNext = false;     // "Next set" was asked while operations were unsent
  let leaving = false;      // logging out after the user agreed to drop unsent operations
  let judgedBefore = 0;     // the user's judgements in this batch outside the current set
  let coveredBefore = 0;    // pairs of the batch judged by anyone, outside the current set
  let answered = false;     // the server has answered an operation sent from this page
  let note = "";            // what the last action did, shown before the saving state

  function csrf() {
    const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  function uuid4() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  async function api(url, body) {
    try {
      const r = await fetch(url, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
        body: body ? JSON.stringify(body) : null,
      });
      let data = null;
      try { data = await r.json(); } catch (e) { data = null; }
      return { ok: r.ok, status: r.status, data };
    } catch (e) {
      return { ok: false, status: 0, data: null };  // network error
    }
  }
  function serial(fn) {
    const run = lane.then(fn, fn);
    lane = run.catch(() => null);
    return run;
  }
  function detail(res) { return (res.data && res.data.detail) || (res.status ? `HTTP ${res.status}` : "no connection"); }
  const transient = (res) => res.status === 0 || res.status >= 500 || res.status === 408 || res.status === 429;
  const sessionEnded = (res) => res.status === 401 || (res.status === 403 && /^(Authentication credentials|CSRF Failed)/.test(detail(res)));
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

  function load(key) { try { return JSON.parse(localStorage.getItem(key) || "[]"); } catch (e) { return []; } }
  function store(key, list) {
    if (list.length) localStorage.setItem(key, JSON.stringify(list)); else localStorage.removeItem(key);
  }
  const queue = () => load(queueKey);
  const setQueue = (list) => store(queueKey, list);
  const sameOp = (a, b) => a.kind === b.kind && a.client_uuid === b.client_uuid;
  const unsentInSet = () => (state && state.set ? queue().filter((op) => op.set_id === state.set.id).length : 0);

  // --- the set as shown: the server's confirmed choices with the queue applied in order -----------
  function applyQueue() {
    if (!state || !state.set) return;
    const items = state.set.items;
    items.forEach((it) => { it.chosen = it.confirmedChosen; it.uuid = it.confirmedUuid; it.unsent = false; });
    for (const op of queue()) {
      if (op.set_id !== state.set.id) continue;
      if (op.kind === "choice") {
        const it = items.find((x) => x.assignment_id === op.assignment_id);
        if (it) { it.chosen = op.chosen_verse; it.uuid = op.client_uuid; it.unsent = true; }
      } else {
        const it = items.find((x) => x.uuid === op.client_uuid);
        if (it) { it.chosen = null; it.uuid = null; it.unsent = false; }
      }
    }
  }

  function confirmed(op, data) {
    answered = true;
    if (data && data.after_close) $("batch-complete-note").hidden = false;  // stored; no new set will follow
    if (!state || !state.set || op.set_id !== state.set.id) return;
    const items = state.set.items;
    if (op.kind === "choice") {
      const it = items.find((x) => x.assignment_id === op.assignment_id);
      if (it) { it.confirmedChosen = op.chosen_verse; it.confirmedUuid = op.client_uuid; }
    } else {
      const it = items.find((x) => x.confirmedUuid === op.client_uuid);
      if (it) { it.confirmedChosen = null; it.confirmedUuid = null; }
    }
  }

  function refused(op, reason) {
    const what = op.kind === "choice" ? "A choice was not stored" : "An undo was not applied";
    store(refusedKey, load(refusedKey).concat([{ op, reason: `${what}: ${reason}` }]));
    // An undo of a choice the server never stored has nothing to undo: drop it too.
    if (op.kind === "choice") setQueue(queue().filter((o) => !(o.kind === "undo" && o.client_uuid === op.client_uuid)));
    needReload = true;
  }

  function paintRefused() {
    const list = load(refusedKey);
    $("refused").hidden = list.length === 0;
    $("refused-list").replaceChildren(...list.map((r) => {
      const li = document.createElement("li");
      li.textContent = r.reason;
      return li;
    }));
  }

  function paintStatus() {
    const n = queue().length;
    const unsent = $("unsent");
    unsent.hidden = n === 0;
    $("unsent-count").textContent = String(n);
    $("unsent-label").textContent = "unsent — will retry";  // "3 unsent — will retry": kept in this browser
    let text;
    if (sessionProblem) text = `${sessionProblem} Your unsent choices are kept in this browser.`;
    else if (n === 0) text = answered || (state && state.set && state.set.items.some((it) => it.chosen !== null)) ? "All choices saved." : "";
    else text = flushing ? "Saving…" : "Not saved yet — retrying…";
    $("save-state").textContent = note ? `${note} ${text}` : text;
    paintRefused();
  }

  function paintVerse(el, verse) {
    el.querySelector(".verse").textContent = verse.text;
    el.querySelector(".translation").textContent = verse.translation || "";
    el.dataset.verse = verse.id;
  }

  // Paint a new pair; input is accepted once it has been painted and shown for MIN_VIEW_MS.
  function paintPair(item) {
    const token = ++paintToken;
    const box = $("choices");
    shown = null;
    delete box.dataset.ready;
    box.dataset.assignment = item.assignment_id;
    box.dataset.pair = item.pair_id;
    paintVerse($("choice-left"), item.left);
    paintVerse($("choice-right"), item.right);
    ["choice-left", "choice-right"].forEach((id) => { $(id).classList.remove("picked"); $(id).disabled = true; });
    requestAnimationFrame(() => requestAnimationFrame(() => {
      if (token !== paintToken) return;
      shownAt = performance.now();
      setTimeout(() => {
        if (token !== paintToken) return;
        shown = item;
        ["choice-left", "choice-right"].forEach((id) => { $(id).disabled = false; });
        box.dataset.ready = "1";
      }, MIN_VIEW_MS);
    }));
  }

  function unpaint() {
    ++paintToken;
    shown = null;
    delete $("choices").dataset.assignment;
    delete $("choices").dataset.pair;
    delete $("choices").dataset.ready;
  }

  function render() {
    paintStatus();
    if (!state) return;
    const set = state.set;
    $("reference-text").textContent = state.reference.text;
    $("reference-translation").textContent = state.reference.translation || "";
    const p = state.progress;
    const mine = judgedBefore + (set ? set.items.filter((it) => it.chosen !== null).length : 0);
    // Coverage as of the last set, plus the pairs this set covers now (others' work shows with the next set).
    const covered = coveredBefore + (set ? set.items.filter((it) => it.chosen !== null && !it.covered_elsewhere).length : 0);
    $("batch-progress").textContent = `· batch: ${covered} of ${p.pairs} pairs judged; you: ${mine}`;
    $("batch-done").hidden = !state.done;
    $("toolbar").hidden = state.done;
    $("key-hints").hidden = state.done;
    if (state.done) {
      unpaint();
      $("choices").hidden = true; $("set-done").hidden = true;
      $("pair-counter").textContent = "Batch finished";
      return;
    }
    const items = set.items;
    const current = items.findIndex((it) => it.chosen === null);
    $("undo").disabled = !items.some((it) => it.chosen !== null);
    if (current === -1) {
      unpaint();
      const waiting = unsentInSet();
      const wasHidden = $("set-done").hidden;
      $("choices").hidden = true; $("set-done").hidden = false;
      $("set-done-title").textContent = waiting ? "Saving your choices…" : "Set complete";
      $("set-done-state").textContent = waiting
        ? `${plural(waiting, "choice")} of this set not saved yet: keep this page open, they are being sent.`
        : "All pairs of this set are saved.";
      $("pair-counter").textContent = waiting ? `All ${items.length} chosen, ${waiting} not saved yet`
        : `Set complete: ${items.length} of ${items.length}`;
      $("next-set").disabled = waiting > 0;
      if (wasHidden || !waiting) $("next-set").focus();
      return;
    }
    $("choices").hidden = false; $("set-done").hidden = true;
    $("pair-counter").textContent = `Pair ${current + 1} of ${items.length}`;
    if (String(items[current].assignment_id) !== $("choices").dataset.assignment) paintPair(items[current]);
  }

  // --- the network lane ------------------------------------------------------------------------------
  function scheduleRetry() {
    if (retryTimer) return;
    const wait = sessionProblem ? 5000 : retryDelay;
    retryDelay = Math.min(retryDelay * 2, 8000);
    retryTimer = setTimeout(() => { retryTimer = null; flush(); }, wait);  // flush ends by reloading if asked
  }

  function send(op) {
    if (op.kind === "choice") {
      return api(root.dataset.submit, { assignment_id: op.assignment_id, pair_id: op.pair_id, chosen_verse: op.chosen_verse,
                                        client_uuid: op.client_uuid, response_ms: op.response_ms });
    }
    return api(root.dataset.undoTemplate.replace("/0/", `/${op.set_id}/`), { client_uuid: op.client_uuid });
  }

  // Sends the queue in order. Resolves true when it is empty.
  function flush() {
    if (flushing) return flushing;
    flushing = serial(async () => {
      for (;;) {
        const q = queue();
        if (!q.length) return true;
        const op = q[0];
        if (!op.sent) { op.sent = true; setQueue(q); }  // from now on only the server can take it back
        paintStatus();
        const res = await send(op);
        if (transient(res)) { scheduleRetry(); return false; }
        if (sessionEnded(res)) {
          sessionProblem = "Your session has ended: log in again as this user to send your choices.";
          scheduleRetry();
          return false;
        }
        sessionProblem = "";
        retryDelay = 1000;
        setQueue(queue().filter((o) => !sameOp(o, op)));
        if (res.ok) confirmed(op, res.data); else refused(op, detail(res));
        applyQueue();
        render();
      }
    }).finally(() => {
      flushing = null;
      paintStatus();
      if (needReload || (wantNext && !unsentInSet())) { needReload = false; wantNext = false; fetchSet(); }
      else render();
    });
    return flushing;
  }

  function fetchSet() {
    if (fetching) return fetching;
    fetching = serial(async () => {
      const res = await api(root.dataset.next);
      if (!res.ok) {
        if ((res.status === 409 || res.status === 403) && !sessionEnded(res)) {  // closed, archived, study, not yours
          const why = detail(res);
          const study = res.status === 403 && /study steps|comprehension check/.test(why);
          $("batch-closed-title").textContent = res.status === 409
            ? (/ is archived/.test(why) ? "This project is archived" : "This batch is complete")
            : (study ? "Study steps first" : "You cannot annotate this batch");
          $("batch-closed-reason").textContent = why;
          $("batch-closed-study").hidden = !study || /did not pass/.test(why);
          $("batch-closed").hidden = false;
          $("workspace").hidden = true;
          unpaint();
          return false;
        }
        const msg = `Could not load the set: ${detail(res)}.`;
        if (!state) $("pair-counter").textContent = transient(res) ? `${msg} Retrying…` : msg;
        else $("save-state").textContent = msg;
        if (sessionEnded(res)) sessionProblem = "Your session has ended: log in again as this user.";
        if (transient(res) || sessionEnded(res)) { needReload = true; scheduleRetry(); }
        return false;
      }
      state = res.data;
      judgedBefore = state.progress.my_judgements;
      coveredBefore = state.progress.pairs_covered;
      if (state.set) {
        state.set.items.forEach((it) => { it.confirmedChosen = it.chosen; it.confirmedUuid = it.client_uuid; });
        judgedBefore -= state.set.items.filter((it) => it.chosen !== null).length;
        coveredBefore -= state.set.items.filter((it) => it.chosen !== null && !it.covered_elsewhere).length;
      }
      $("choices").dataset.assignment = "";
      applyQueue();
      render();
      return true;
    }).finally(() => { fetching = null; });
    return fetching;
  }

  function nextSet() {
    if (!state || state.done || $("set-done").hidden || $("next-set").disabled) return;
    if (unsentInSet()) { wantNext = true; flush(); return; }
    fetchSet();
  }

  // --- input -----------------------------------------------------------------------------------------
  function choose(side, ev) {
    if (ev && ev.detail > 1) return;  // the second click of a double click
    if (!shown || !state || !state.set) return;
    const item = shown;
    if (item.chosen !== null || String(item.assignment_id) !== $("choices").dataset.assignment) return;
    const button = $(`choice-${side}`);
    note = "";
    unpaint();
    button.classList.add("picked");
    setQueue(queue().concat([{
      kind: "choice", set_id: state.set.id, assignment_id: item.assignment_id, pair_id: Number(item.pair_id),
      chosen_verse: Number(button.dataset.verse), client_uuid: uuid4(),
      response_ms: Math.round(performance.now() - shownAt), sent: false,
    }]));
    applyQueue();
    render();
    flush();
  }

  function undo() {
    if (!state || !state.set || fetching) return;  // a set on its way: the one shown is finished
    const chosen = state.set.items.filter((it) => it.chosen !== null);
    if (!chosen.length) return;
    const last = chosen.reduce((a, b) => (b.position > a.position ? b : a));
    const q = queue();
    const local = q.findIndex((op) => op.kind === "choice" && op.client_uuid === last.uuid);
    if (local !== -1 && !q[local].sent) q.splice(local, 1);  // never sent: the server never sees it
    else q.push({ kind: "undo", set_id: state.set.id, client_uuid: last.uuid, sent: false });
    setQueue(q);
    note = "Last choice undone.";
    applyQueue();
    render();
    flush();
  }

  function startBreakTimer() {
    const minutes = window.SIMILIA_SESSION_MINUTES;
    if (!minutes) return;
    const key = "similia-session-start";
    let start = Number(sessionStorage.getItem(key));
    if (!start) { start = Date.now(); sessionStorage.setItem(key, String(start)); }
    const check = () => {
      if (Date.now() - start >= minutes * 60000) $("break-reminder").hidden = false;
      else setTimeout(check, 15000);
    };
    check();
  }
  $("dismiss-break").addEventListener("click", () => {
    $("break-reminder").hidden = true;
    sessionStorage.setItem("similia-session-start", String(Date.now()));
    startBreakTimer();
  });
  $("dismiss-refused").addEventListener("click", () => { localStorage.removeItem(refusedKey); paintRefused(); });

  document.addEventListener("keydown", (ev) => {
    if (ev.repeat || ev.altKey || ev.ctrlKey || ev.metaKey) return;  // held keys and browser shortcuts
    if (ev.target && /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) return;
    if (ev.key === "ArrowLeft") { ev.preventDefault(); choose("left"); }
    else if (ev.key === "ArrowRight") { ev.preventDefault(); choose("right"); }
    else if (ev.key === "u" || ev.key === "U" || ev.key === "Backspace") { ev.preventDefault(); undo(); }
    else if (ev.key === "Enter" && !$("set-done").hidden) { ev.preventDefault(); nextSet(); }
  });
  $("choice-left").addEventListener("click", (ev) => choose("left", ev));
  $("choice-right").addEventListener("click", (ev) => choose("right", ev));
  $("undo").addEventListener("click", undo);
  $("next-set").addEventListener("click", nextSet);

  // Leaving with unsent operations asks first; logging out sends them, or drops them if the user agrees.
  window.addEventListener("beforeunload", (ev) => {
    if (leaving || !queue().length) return;
    ev.preventDefault();
    ev.returnValue = "";
  });
  const logoutForm = document.querySelector("form.logout");
  if (logoutForm) {
    logoutForm.addEventListener("submit", async (ev) => {
      if (leaving || !queue().length) return;  // nothing unsent: the ordinary logout clears the queues
      ev.preventDefault();
      ev.stopImmediatePropagation();
      $("save-state").textContent = "Sending your choices before logging out…";
      await flush();
      const left = queue().length;
      if (left && !window.confirm(`${plural(left, "choice")} could not be saved yet. Log out anyway and lose them?`)) {
        paintStatus();
        return;
      }
      leaving = true;
      if (window.Similia && window.Similia.clearQueues) window.Similia.clearQueues(userId);
      logoutForm.submit();
    }, true);
  }
  window.addEventListener("storage", (ev) => { if (ev.key === queueKey || ev.key === refusedKey) { applyQueue(); render(); } });

  startBreakTimer();
  paintStatus();
  if (!$("workspace").hidden) fetchSet();  // the set first: the queue never holds up loading it
  flush();
})();
