// Logging out clears what this browser keeps for the user: the annotator page's queues of unsent
// choices and its refused ones (keyed by user and batch), so the next person in this browser starts
// clean. The annotator page sends its queue before it lets the logout through.
(function () {
  "use strict";
  function clearQueues(userId) {
    const mine = [`similia-queue-u${userId}-`, `similia-refused-u${userId}-`, "similia-pending-"];
    for (let i = localStorage.length - 1; i >= 0; i -= 1) {
      const key = localStorage.key(i);
      if (key && mine.some((prefix) => key.startsWith(prefix))) localStorage.removeItem(key);
    }
  }
  window.Similia = Object.assign(window.Similia || {}, { clearQueues });
  document.querySelectorAll("form.logout").forEach((form) => {
    form.addEventListener("submit", () => clearQueues(form.dataset.user));
  });
})();
