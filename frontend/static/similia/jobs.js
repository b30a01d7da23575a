// Polls the job API while jobs are queued or running, and wires the cancel button.
// Times are shown in UTC like the server-rendered ones (one time zone per page). A box marked
// data-reload-on-finish reloads the page once its job has finished, so results appear by themselves.
(function () {
  "use strict";
  const finished = new Set(["succeeded", "failed", "cancelled"]);
  const gone = new Set();  // jobs this user may not read (4xx): stop asking
  let started = false;
  function utc(iso) { return new Date(iso).toISOString().slice(0, 19).replace("T", " ") + " UTC"; }
  function csrf() {
    const m = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : "";
  }
  async function fetchJob(id) {
    const r = await fetch(`/api/v1/jobs/${id}/`, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (r.status >= 400 && r.status < 500) { gone.add(id); throw new Error(`job ${id}: HTTP ${r.status}`); }
    if (!r.ok) throw new Error(`job ${id}: HTTP ${r.status}`);
    return r.json();
  }
  function paint(el, job) {
    el.className = el.className.replace(/status-\w+/, "") + ` status-${job.status}`;
    const set = (sel, text) => { const n = el.querySelector(sel); if (n) n.textContent = text; };
    set(".status", job.status);
    set(".pmsg", job.progress_message || "");
    set(".worker", job.worker || "–");
    if (job.ahead !== undefined) set(".ahead", job.ahead === null ? "" : ` · ${job.ahead} job${job.ahead === 1 ? "" : "s"} ahead of it`);
    set(".finished", job.finished ? utc(job.finished) : "–");
    if (job.error_message !== undefined) set(".error-text", job.error_message || "–");  // never the traceback
    if (job.log !== undefined) set(".log", job.log || "–");
    if (job.result !== undefined && job.result !== null) set(".result", JSON.stringify(job.result, null, 2));
    const bar = el.querySelector("progress"); if (bar) bar.value = job.progress;
    if (finished.has(job.status)) {
      const b = el.querySelector("#cancel-job"); if (b) b.remove();
      if (el.dataset.reloadOnFinish !== undefined && !el.dataset.reloaded) {
        el.dataset.reloaded = "1";
        const note = el.querySelector(".reload-note"); if (note) note.textContent = "finished: loading the result…";
        setTimeout(() => window.location.reload(), 300);
      }
    }
  }
  function poll() {
    const nodes = Array.from(document.querySelectorAll("[data-job]"))
      .filter((n) => !gone.has(n.dataset.job) && !finished.has((n.querySelector(".status") || {}).textContent));
    if (!nodes.length) return;
    Promise.all(nodes.map((n) => fetchJob(n.dataset.job).then((j) => paint(n, j)).catch(() => {})))
      .finally(() => setTimeout(poll, 1500));
  }
  function start() { if (!started) { started = true; poll(); } }
  document.addEventListener("click", async (ev) => {
    if (ev.target.id !== "cancel-job") return;
    const box = ev.target.closest("[data-job]");
    const r = await fetch(box.dataset.cancel, { method: "POST", headers: { "X-CSRFToken": csrf() }, credentials: "same-origin" });
    if (r.ok) paint(box, await r.json());
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
