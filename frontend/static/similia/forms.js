// Every page's forms. One with data-confirm asks before it submits (closing a batch, removing a member, …). One that
// is sent shows that it is working: its button says "Working…" (disabled, the form aria-busy) until the answer's page
// replaces this one, so a search or a computation taking seconds is not a page that seems to do nothing. A link
// with data-working whose page computes its answer (a corpus line's "similar passages") says "Working…" the same way.
(function () {
  "use strict";
  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) ev.preventDefault();
  }, true);
  document.addEventListener("submit", (ev) => {  // after the page's own handlers: a form they took stays as it is
    const button = ev.submitter || ev.target.querySelector("button:not([type=button])");
    if (ev.defaultPrevented || !button || ev.target.target) return;
    ev.target.setAttribute("aria-busy", "true");
    setTimeout(() => { button.dataset.label = button.textContent; button.textContent = "Working…"; button.disabled = true; });
  });
  document.addEventListener("click", (ev) => {  // a plain click that opens the page here, not a new tab
    const link = ev.target.closest("a[data-working]");
    if (!link || ev.defaultPrevented || ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey
        || link.target) return;
    link.setAttribute("aria-busy", "true");
    link.dataset.label = link.textContent;
    link.textContent = "Working…";
  });
  window.addEventListener("pageshow", (ev) => {  // back to a page the browser kept: its buttons and links as they were
    if (!ev.persisted) return;
    document.querySelectorAll("form[aria-busy] button[data-label], a[aria-busy][data-label]").forEach((b) => { b.textContent = b.dataset.label; b.disabled = false; });
    document.querySelectorAll("form[aria-busy], a[aria-busy]").forEach((f) => f.removeAttribute("aria-busy"));
  });
})();
