// Forms with data-confirm ask before they submit (closing a batch, removing a member, …).
(function () {
  "use strict";
  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest("form[data-confirm]");
    if (form && !window.confirm(form.dataset.confirm)) ev.preventDefault();
  }, true);
})();
