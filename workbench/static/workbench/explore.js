// The explorer: keyboard navigation over the candidate rows, both passages side by side with the words each
// detection channel matched coloured and a bar of every channel's contribution, and verdicts.
// A verdict shows as saved only once the server has answered 2xx. A typed note is a draft of its row, kept in
// the browser (localStorage, per user and candidate) until the server has saved it: clicking another row,
// paging or reloading never loses it, and coming back to the row brings it back.
(function () {
  "use strict";
  const rows = Array.from(document.querySelectorAll("tr.cand"));
  const state = document.getElementById("save-state");
  const note = document.getElementById("d-note");
  const noteState = document.getElementById("note-state");
  const detail = document.getElementById("detail");
  const explorer = document.querySelector(".explorer");
  const user = detail.dataset.user || "";
  let current = -1;
  let shownId = null;  // the candidate whose passages and note box are on screen
  let savedNote = "";  // the note of this user's saved verdict on it
  let busy = false;

  // ---- drafts of notes, per candidate
  const store = (() => { try { return window.localStorage; } catch (e) { return null; } })();
  const draftKey = (id) => `similia.note.${user}.${id}`;
  function draft(id) { return store ? store.getItem(draftKey(id)) : null; }
  function keepDraft(id, text) {
    if (!store) return;
    if (text === null) store.removeItem(draftKey(id)); else store.setItem(draftKey(id), text);
    const row = rows.find((r) => r.dataset.id === String(id));
    if (row) flagDraft(row);
  }
  function flagDraft(row) {
    let flag = row.querySelector(".draft-flag");
    if (draft(row.dataset.id) !== null) {
      if (!flag) {
        flag = document.createElement("span");
        flag.className = "draft-flag"; flag.title = "a note typed here is not saved yet"; flag.textContent = "✎ ";
        row.querySelector(".verdict-cell").prepend(flag);
      }
    } else if (flag) flag.remove();
  }
  function paintNoteState() {
    if (shownId === null) return;
    const d = draft(shownId);
    noteState.textContent = d === null ? "" : "draft, not saved yet: a verdict saves it";
  }
  note.addEventListener("input", () => {
    if (shownId === null) return;
    keepDraft(shownId, note.value === savedNote ? null : note.value);
    paintNoteState();
  });
  note.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); leaveNote(); }
  });
  function leaveNote() {
    note.blur();
    if (current >= 0) rows[current].focus({ preventScroll: true });
  }

  function csrf() {
    const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  function fmt(x, digits = 3) { return x === null || x === undefined ? "–" : Number(x).toFixed(digits); }

  // ---- channels: one colour each (the common ones fixed, others from a palette in the order they come)
  const FIXED = { lemma: "#a8d8f0", rare: "#f6c177", form: "#c6f6d5", quote: "#f4a6c6", sound: "#d9c2f0",
    edit: "#f9e79f", synonym: "#b5ead7", order: "#ffd1a9", position: "#c7d2fe", semantic: "#fbc4ab", encoder: "#e2c6a8" };
  const PALETTE = ["#bde0fe", "#ffc8dd", "#cdeac0", "#ffe5a5", "#d0c4f7", "#ffd6a5", "#a0e7e5", "#f1c0e8"];
  function colours(channels) {
    const out = {};
    let n = 0;
    for (const ch of channels) out[ch.name] = FIXED[ch.name] || PALETTE[n++ % PALETTE.length];
    return out;
  }
  function paint(el, pieces, colour) {
    el.textContent = "";
    for (const [text, shared, channels] of pieces) {
      const chans = (channels || []).filter((c) => colour[c]);
      if (chans.length) {
        const m = document.createElement("mark");
        m.className = "ch" + (shared ? " shared" : "");
        m.dataset.channels = chans.join(" ");
        m.title = chans.join(", ");
        m.style.setProperty("--c", colour[chans[0]]);
        if (chans.length > 1) m.style.setProperty("--c2", colour[chans[1]]);
        m.textContent = text; el.appendChild(m);
      } else if (shared) {
        const m = document.createElement("mark"); m.className = "shared"; m.textContent = text; el.appendChild(m);
      } else el.appendChild(document.createTextNode(text));
    }
  }
  function paintExplanation(ex, colour) {
    const box = document.getElementById("d-explain");
    document.getElementById("d-no-explain").hidden = !!ex;
    box.hidden = !ex;
    if (!ex) return;
    const list = document.getElementById("d-channels");
    list.textContent = "";
    for (const ch of ex.channels) {
      const li = document.createElement("li");
      li.dataset.channel = ch.name;
      li.style.setProperty("--c", colour[ch.name]);
      if (!ch.contribution && !ch.matches.length) li.className = "off";
      const sw = document.createElement("span"); sw.className = "swatch";
      const name = document.createElement("span"); name.className = "name"; name.textContent = ch.name;
      const bar = document.createElement("span"); bar.className = "bar";
      bar.title = `${Math.round(ch.share * 100)}% of the score`;
      const fill = document.createElement("span"); fill.style.width = `${(ch.share * 100).toFixed(1)}%`; bar.appendChild(fill);
      const val = document.createElement("span"); val.className = "num contribution"; val.textContent = fmt(ch.contribution);
      const how = document.createElement("span"); how.className = "how";
      how.textContent = `score ${fmt(ch.score)} × weight ${fmt(ch.weight, 2)}` +
        (ch.matches.length ? ` · ${ch.matches.map(([q, s]) => (q === s ? q : `${q} / ${s}`)).join(", ")}` : "");
      li.append(sw, name, bar, val, how);
      list.appendChild(li);
    }
    document.getElementById("d-unique").textContent = `Shared words: ${ex.uniqueness_text}.`;
    document.getElementById("d-unique").title = ex.uniqueness_corpus ? `counted over ${ex.uniqueness_corpus}` : "";
    document.getElementById("d-rarity").textContent = ex.rarity.length
      ? "Matched words: " + ex.rarity.map(([w, v, word]) => `${w} ${word}`).join(" · ")
      : "";
    document.getElementById("d-rarity").title = ex.rarity.length
      ? "rarity, the log of reference-corpus words per occurrence: " + ex.rarity.map(([w, v]) => `${w} ${fmt(v, 2)}`).join(", ")
      : "";
  }
  function paintVerdicts(list) {
    const box = document.getElementById("d-verdicts");
    box.textContent = list.length ? "Verdicts: " + list.map((v) => `${v.decision} by ${v.user} at ${new Date(v.updated).toLocaleString()}${v.note ? ` (“${v.note}”)` : ""}`).join("; ") : "No verdict yet.";
  }
  function open() {
    detail.classList.remove("empty");
    explorer.classList.add("open");
  }
  function close() {
    detail.classList.add("empty");
    explorer.classList.remove("open");
  }
  async function show(i) {
    if (i < 0 || i >= rows.length) return;
    if (current >= 0) rows[current].classList.remove("selected");
    current = i;
    const row = rows[i];
    row.classList.add("selected");
    open();
    row.scrollIntoView({ block: "nearest" });
    if (document.activeElement !== note) row.focus({ preventScroll: true });
    state.textContent = ""; state.className = "save-state";
    const r = await fetch(`/api/v1/workbench/candidates/${row.dataset.id}/`, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!r.ok) { state.textContent = `Could not load the candidate (HTTP ${r.status}).`; state.className = "save-state bad"; return; }
    const c = await r.json();
    if (rows[current] !== row) return;  // the user moved on meanwhile
    document.getElementById("detail-empty").hidden = true;
    document.getElementById("detail-body").hidden = false;
    document.getElementById("detail-body").dataset.id = c.id;
    document.getElementById("d-ids").textContent = `${c.query_id} → ${c.source_id}`;
    document.getElementById("d-qid").textContent = c.query_id + (c.query_author ? ` · ${c.query_author}` : "");
    document.getElementById("d-sid").textContent = c.source_id + (c.source_author ? ` · ${c.source_author}` : "");
    document.getElementById("d-rank").textContent = c.rank;
    document.getElementById("d-score").textContent = fmt(c.score);
    document.getElementById("d-probs").textContent = c.p_cit === null ? "no reranker" : `P(cit.) ${fmt(c.p_cit)} · P(cf.) ${fmt(c.p_cf)} · label ${c.label || "none"}`;
    const colour = colours(c.explanation ? c.explanation.channels : []);
    paint(document.getElementById("d-query"), c.highlight.query, colour);
    paint(document.getElementById("d-source"), c.highlight.source, colour);
    paintExplanation(c.explanation, colour);
    document.getElementById("d-shared").textContent = c.highlight.shared_lemmas.join(", ") || "none";
    paintVerdicts(c.verdicts);
    const mine = c.verdicts.find((v) => v.user === user);
    savedNote = mine ? mine.note : "";
    shownId = String(c.id);
    const d = draft(shownId);
    note.value = d !== null ? d : savedNote;
    paintNoteState();
  }
  async function decide(decision) {
    if (current < 0 || busy || shownId === null) return;
    const row = rows[current];
    if (row.dataset.id !== shownId) {  // its passages are still loading: decide on what was read, not before
      state.textContent = "Not saved: the candidate is still loading."; state.className = "save-state bad"; return;
    }
    const id = shownId;
    const sent = note.value;
    busy = true;
    state.textContent = `Saving ${decision}…`; state.className = "save-state";
    try {
      const r = await fetch(`/api/v1/workbench/candidates/${id}/verdict/`, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify({ decision, note: sent }),
      });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) { state.textContent = `Not saved: ${body.detail || JSON.stringify(body) || r.status}`; state.className = "save-state bad"; return; }
      // the server has it: the draft is done unless the note changed again meanwhile
      if (draft(id) === null || draft(id) === sent) keepDraft(id, null);
      if (shownId === id) { savedNote = body.note; paintNoteState(); }
      if (rows[current] === row) { state.textContent = `Saved: ${body.decision} by ${body.user}${body.note ? " with the note" : ""}.`; state.className = "save-state ok"; }
      const cell = row.querySelector(".verdict-cell");
      cell.textContent = `${body.decision} · ${body.user}`;
      flagDraft(row);
      document.getElementById("remaining").textContent = body.progress.remaining;
      if (shownId === id) paintVerdicts([body]);
    } catch (err) {
      state.textContent = `Not saved: ${err.message}`; state.className = "save-state bad";
    } finally { busy = false; }
  }
  rows.forEach((row, i) => { flagDraft(row); row.addEventListener("click", () => show(i)); });
  document.querySelectorAll(".verdict-buttons button").forEach((b) => b.addEventListener("click", () => decide(b.dataset.decision)));
  document.getElementById("d-close").addEventListener("click", close);
  const keys = { c: "cit.", f: "cf.", r: "rejected", u: "unsure" };
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); show(current < 0 ? 0 : Math.min(current + 1, rows.length - 1)); }
    else if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); show(Math.max(current - 1, 0)); }
    else if (keys[e.key]) { e.preventDefault(); decide(keys[e.key]); }
    else if (e.key === "e" && shownId !== null) { e.preventDefault(); open(); note.focus(); }
    else if (e.key === "Escape") close();
    else if (e.key === "n") { const a = document.getElementById("next-page"); if (a) location.href = a.href; }
    else if (e.key === "p") { const a = document.getElementById("prev-page"); if (a) location.href = a.href; }
    else if (e.key === "/") {  // the filters are folded under the list's head: unfold them first
      e.preventDefault();
      const box = document.getElementById("filter-box");
      if (box) box.open = true;
      document.getElementById("search").focus();
    }
  });
})();
