// The annotator page: serves sets from the API, records choices (click or ←/→), undo (U),
// next set (Enter). Every submit carries a client-made UUID, so a retry after a network error is
// stored once; unsent choices are kept in localStorage and retried until the server has them.
(function () {
  "use strict";
  const root = document.getElementById("annotator");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const batchId = root.dataset.batch;
  const pendingKey = `similia-pending-${batchId}`;
  let state = null;       // last payload from next-set
  let current = null;     // index of the item on screen
  let shownAt = 0;
  let busy = false;

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
    const r = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
      body: body ? JSON.stringify(body) : null,
    });
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    return { ok: r.ok, status: r.status, data };
  }
  function saveState(text) { $("save-state").textContent = text; }
  function pending() { try { return JSON.parse(localStorage.getItem(pendingKey) || "[]"); } catch (e) { return []; } }
  function setPending(list) { localStorage.setItem(pendingKey, JSON.stringify(list)); }

  async function flush() {
    let queue = pending();
    while (queue.length) {
      const item = queue[0];
      let res;
      try { res = await api(root.dataset.submit, item); } catch (e) { res = null; }
      if (res === null || res.status >= 500) {
        saveState(`Not saved yet (${queue.length} waiting) — retrying…`);
        setTimeout(flush, 2000);
        return false;
      }
      queue.shift();
      setPending(queue);
      if (!res.ok) saveState(`Not stored: ${(res.data && res.data.detail) || res.status}`);
    }
    saveState("All choices saved.");
    return true;
  }

  function paintVerse(el, verse) {
    el.querySelector(".verse").textContent = verse.text;
    el.querySelector(".translation").textContent = verse.translation || "";
    el.dataset.verse = verse.id;
  }

  function render() {
    const set = state.set;
    $("reference-text").textContent = state.reference.text;
    $("reference-translation").textContent = state.reference.translation || "";
    const p = state.progress;
    const mineNow = p.my_judgements + (state.set ? state.set.items.filter((it) => it.chosen !== null && !it.counted).length : 0);
    $("batch-progress").textContent = `· batch: ${p.pairs_covered} of ${p.pairs} pairs judged (at the start of this set); you: ${mineNow}`;
    $("batch-done").hidden = !state.done;
    if (state.done) {
      $("choices").hidden = true; $("set-done").hidden = true;
      $("pair-counter").textContent = "Batch finished";
      return;
    }
    const items = set.items;
    current = items.findIndex((it) => it.chosen === null);
    const doneCount = items.filter((it) => it.chosen !== null).length;
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
    $("undo").disabled = doneCount === 0;
    shownAt = performance.now();
  }

  async function loadSet() {
    busy = true;
    const res = await api(root.dataset.next);
    busy = false;
    if (!res.ok) { $("pair-counter").textContent = (res.data && res.data.detail) || `Error ${res.status}`; return; }
    state = res.data;
    if (state.set) state.set.items.forEach((it) => { it.counted = it.chosen !== null; });
    render();
  }

  async function choose(side) {
    if (busy || !state || state.done || current === null || current < 0) return;
    const item = state.set.items[current];
    const verse = side === "left" ? item.left : item.right;
    const payload = { assignment_id: item.assignment_id, chosen_verse: verse.id, client_uuid: uuid4(),
                      response_ms: Math.round(performance.now() - shownAt) };
    busy = true;
    $(`choice-${side}`).classList.add("picked");
    setPending(pending().concat([payload]));
    item.chosen = verse.id;
    saveState("Saving…");
    await flush();
    busy = false;
    render();
  }

  async function undo() {
    if (busy || !state || !state.set) return;
    busy = true;
    await flush();
    const res = await api(root.dataset.undoTemplate.replace("/0/", `/${state.set.id}/`));
    busy = false;
    if (!res.ok) { saveState((res.data && res.data.detail) || `Undo failed (${res.status})`); return; }
    const item = state.set.items.find((it) => it.assignment_id === res.data.assignment);
    if (item) item.chosen = null;
    saveState("Last choice undone.");
    render();
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
    $("dismiss-break").addEventListener("click", () => {
      $("break-reminder").hidden = true;
      sessionStorage.setItem(key, String(Date.now()));
      startBreakTimer();
    });
  }

  document.addEventListener("keydown", (ev) => {
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
  flush().then(loadSet);
})();
