// The annotator page: serves sets from the API, records choices (click or ←/→), undo (U), next set
// (Enter). Every choice gets a client-made UUID and waits in localStorage until the server has it;
// one flush at a time sends the queue in order, so a retry after a network error is stored once
// and nothing is lost when the connection or the session drops.
(function () {
  "use strict";
  const root = document.getElementById("annotator");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const batchId = root.dataset.batch;
  const pendingKey = `similia-pending-${batchId}`;
  let state = null;        // last payload from next-set
  let current = null;      // index of the item on screen
  let shownAt = 0;
  let loading = false;     // a next-set or undo request is in flight
  let flushing = null;     // the one flush in flight (a promise)
  let retryTimer = null;
  let sticky = "";         // an error the user must see until the queue is empty again

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
  function detail(res) { return (res.data && res.data.detail) || (res.status ? `HTTP ${res.status}` : "no connection"); }
  function saveState(text) { $("save-state").textContent = sticky ? `${sticky} ${text}` : text; }
  function pending() { try { return JSON.parse(localStorage.getItem(pendingKey) || "[]"); } catch (e) { return []; } }
  function setPending(list) { localStorage.setItem(pendingKey, JSON.stringify(list)); }
  function dropPending(uuid) { setPending(pending().filter((p) => p.client_uuid !== uuid)); }

  function scheduleRetry(ms) {
    if (retryTimer) return;
    retryTimer = setTimeout(() => { retryTimer = null; flush(); }, ms);
  }

  // Sends the queue in order. Resolves true when it is empty.
  function flush() {
    if (flushing) return flushing;
    flushing = (async () => {
      let queue = pending();
      while (queue.length) {
        const item = queue[0];
        const res = await api(root.dataset.submit, item);
        if (res.status === 0 || res.status >= 500 || res.status === 408 || res.status === 429) {
          saveState(`Not saved yet (${queue.length} waiting) — retrying…`);
          scheduleRetry(2000);
          return false;
        }
        if (res.status === 401 || res.status === 403) {
          sticky = "Your session has ended: log in again in another tab; your unsent choices are kept here.";
          saveState(`(${queue.length} waiting)`);
          scheduleRetry(5000);
          return false;
        }
        dropPending(item.client_uuid);
        if (!res.ok) {
          // The server refused this choice (e.g. the set expired and its pair went to someone else):
          // say so and reload the set from the server, which is the truth.
          sticky = `Not stored: ${detail(res)}.`;
          if (state) reloadAfterRefusal();
        }
        queue = pending();
      }
      if (!sticky.startsWith("Not stored")) sticky = "";
      saveState("All choices saved.");
      return true;
    })().finally(() => { flushing = null; });
    return flushing;
  }

  function paintVerse(el, verse) {
    el.querySelector(".verse").textContent = verse.text;
    el.querySelector(".translation").textContent = verse.translation || "";
    el.dataset.verse = verse.id;
  }

  function render() {
    if (!state) return;
    const set = state.set;
    $("reference-text").textContent = state.reference.text;
    $("reference-translation").textContent = state.reference.translation || "";
    const p = state.progress;
    const mine = p.my_judgements + (set ? set.items.filter((it) => it.chosen !== null && !it.counted).length : 0);
    $("batch-progress").textContent = `· batch: ${p.pairs_covered} of ${p.pairs} pairs judged (at the start of this set); you: ${mine}`;
    $("batch-done").hidden = !state.done;
    if (state.done) {
      $("choices").hidden = true; $("set-done").hidden = true;
      $("pair-counter").textContent = "Batch finished";
      return;
    }
    const items = set.items;
    current = items.findIndex((it) => it.chosen === null);
    const doneCount = items.filter((it) => it.chosen !== null).length;
    $("undo").disabled = doneCount === 0;
    if (current === -1) {
      $("choices").hidden = true; $("set-done").hidden = false;
      $("pair-counter").textContent = `Set complete: ${items.length} of ${items.length}`;
      $("next-set").focus();
      return;
    }
    $("choices").hidden = false; $("set-done").hidden = true;
    $("pair-counter").textContent = `Pair ${current + 1} of ${items.length}`;
    paintVerse($("choice-left"), items[current].left);
    paintVerse($("choice-right"), items[current].right);
    ["choice-left", "choice-right"].forEach((id) => { $(id).classList.remove("picked"); $(id).disabled = false; });
    shownAt = performance.now();
  }

  async function fetchSet() {
    const res = await api(root.dataset.next);
    if (!res.ok) { $("pair-counter").textContent = detail(res); return; }
    state = res.data;
    if (state.set) state.set.items.forEach((it) => { it.counted = it.chosen !== null; });
    render();
  }

  async function loadSet() {
    if (loading) return;
    loading = true;
    try {
      if (!(await flush())) return;  // the server must have every choice before the next set
      await fetchSet();
    } finally {
      loading = false;
    }
  }

  async function reloadAfterRefusal() {
    if (loading) return;
    loading = true;
    try { await fetchSet(); } finally { loading = false; }
  }

  function choose(side) {
    if (loading || !state || state.done || current === null || current < 0) return;
    const item = state.set.items[current];
    const verse = side === "left" ? item.left : item.right;
    $(`choice-${side}`).classList.add("picked");
    if (sticky.startsWith("Not stored")) sticky = "";  // the annotator has seen it and moved on
    setPending(pending().concat([{ assignment_id: item.assignment_id, chosen_verse: verse.id, client_uuid: uuid4(),
                                   response_ms: Math.round(performance.now() - shownAt) }]));
    item.chosen = verse.id;
    saveState("Saving…");
    render();
    flush();
  }

  async function undo() {
    if (loading || !state || !state.set) return;
    const queue = pending();
    const mineHere = new Set(state.set.items.map((it) => it.assignment_id));
    const lastLocal = [...queue].reverse().find((p) => mineHere.has(p.assignment_id));
    if (lastLocal && !flushing) {
      // Not sent yet: take it back here, the server never sees it.
      dropPending(lastLocal.client_uuid);
      const item = state.set.items.find((it) => it.assignment_id === lastLocal.assignment_id);
      if (item) item.chosen = null;
      saveState("Last choice undone.");
      render();
      return;
    }
    loading = true;
    try {
      if (!(await flush())) { saveState("Undo waits until your choices are saved."); return; }
      const res = await api(root.dataset.undoTemplate.replace("/0/", `/${state.set.id}/`));
      if (!res.ok) { saveState(`Undo failed: ${detail(res)}`); return; }
      const item = state.set.items.find((it) => it.assignment_id === res.data.assignment);
      if (item) {
        if (item.counted) state.progress.my_judgements -= 1;
        item.chosen = null; item.counted = false;
      }
      saveState("Last choice undone.");
      render();
    } finally {
      loading = false;
    }
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

  document.addEventListener("keydown", (ev) => {
    if (ev.repeat || ev.altKey || ev.ctrlKey || ev.metaKey) return;  // held keys and browser shortcuts
    if (ev.target && /^(INPUT|TEXTAREA|SELECT)$/.test(ev.target.tagName)) return;
    if (ev.key === "ArrowLeft") { ev.preventDefault(); choose("left"); }
    else if (ev.key === "ArrowRight") { ev.preventDefault(); choose("right"); }
    else if (ev.key === "u" || ev.key === "U" || ev.key === "Backspace") { ev.preventDefault(); undo(); }
    else if (ev.key === "Enter" && !$("set-done").hidden) { ev.preventDefault(); loadSet(); }
  });
  $("choice-left").addEventListener("click", () => choose("left"));
  $("choice-right").addEventListener("click", () => choose("right"));
  $("undo").addEventListener("click", undo);
  $("next-set").addEventListener("click", loadSet);
  startBreakTimer();
  loadSet();
})();
