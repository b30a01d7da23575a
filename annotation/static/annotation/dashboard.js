// The dashboard's progress table: counting every live judgement of a large project takes longer
// than the rest of the page, so the page arrives first and the counts are fetched into it.
(function () {
  "use strict";
  function load() {
    const box = document.getElementById("progress-counts");
    if (!box || !box.dataset.src) return;
    fetch(box.dataset.src, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then((r) => { if (!r.ok) throw new Error(`HTTP ${r.status}`); return r.text(); })
      .then((html) => { box.innerHTML = html; box.setAttribute("aria-busy", "false"); })
      .catch((err) => {
        box.setAttribute("aria-busy", "false");
        box.textContent = `The progress counts could not be loaded (${err.message}); reload the page to try again.`;
      });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", load); else load();
})();
