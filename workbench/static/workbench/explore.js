// The explorer: keyboard navigation over the candidate rows, both passages side by side with the shared
// lemmas marked, and verdicts. A verdict shows as saved only once the server has answered 2xx.
(function () {
  "use strict";
  const rows = Array.from(document.querySelectorAll("tr.cand"));
  const state = document.getElementById("save-state");
  const note = document.getElementById("d-note");
  let current = -1;
  let busy = false;
  function csrf() {
    const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  function fmt(x) { return x === null || x === undefined ? "–" : Number(x).toFixed(3); }
  function paint(el, pieces) {
    el.textContent = "";
    for (const [text, shared] of pieces) {
      if (shared) { const m = document.createElement("mark"); m.className = "shared"; m.textContent = text; el.appendChild(m); }
      else el.appendChild(document.createTextNode(text));
    }
  }
  function paintVerdicts(list) {
    const box = document.getElementById("d-verdicts");
    box.textContent = list.length ? "Verdicts: " + list.map((v) => `${v.decision} by ${v.user} at ${new Date(v.updated).toLocaleString()}${v.note ? ` (“${v.note}”)` : ""}`).join("; ") : "No verdict yet.";
  }
  async function show(i) {
    if (i < 0 || i >= rows.length) return;
    if (current >= 0) rows[current].classList.remove("selected");
    current = i;
    const row = rows[i];
    row.classList.add("selected");
    row.scrollIntoView({ block: "nearest" });
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
    paint(document.getElementById("d-query"), c.highlight.query);
    paint(document.getElementById("d-source"), c.highlight.source);
    document.getElementById("d-shared").textContent = c.highlight.shared_lemmas.join(", ") || "none";
    paintVerdicts(c.verdicts);
    note.value = "";
  }
  async function decide(decision) {
    if (current < 0 || busy) return;
    const row = rows[current];
    busy = true;
    state.textContent = `Saving ${decision}…`; state.className = "save-state";
    try {
      const r = await fetch(`/api/v1/workbench/candidates/${row.dataset.id}/verdict/`, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify({ decision, note: note.value }),
      });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) { state.textContent = `Not saved: ${body.detail || JSON.stringify(body) || r.status}`; state.className = "save-state bad"; return; }
      state.textContent = `Saved: ${body.decision} by ${body.user}.`; state.className = "save-state ok";
      row.querySelector(".verdict-cell").textContent = `${body.decision} · ${body.user}`;
      document.getElementById("remaining").textContent = body.progress.remaining;
      paintVerdicts([body]);
    } catch (err) {
      state.textContent = `Not saved: ${err.message}`; state.className = "save-state bad";
    } finally { busy = false; }
  }
  rows.forEach((row, i) => row.addEventListener("click", () => show(i)));
  document.querySelectorAll(".verdict-buttons button").forEach((b) => b.addEventListener("click", () => decide(b.dataset.decision)));
  const keys = { c: "cit.", f: "cf.", r: "rejected", u: "unsure" };
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "j" || e.key === "ArrowDown") { e.preventDefault(); show(current < 0 ? 0 : Math.min(current + 1, rows.length - 1)); }
    else if (e.key === "k" || e.key === "ArrowUp") { e.preventDefault(); show(Math.max(current - 1, 0)); }
    else if (keys[e.key]) { e.preventDefault(); decide(keys[e.key]); }
    else if (e.key === "n") { const a = document.getElementById("next-page"); if (a) location.href = a.href; }
    else if (e.key === "p") { const a = document.getElementById("prev-page"); if (a) location.href = a.href; }
    else if (e.key === "/") { e.preventDefault(); document.getElementById("search").focus(); }
  });
})();
