// Type-ahead verse pickers of the batch form: an ARIA 1.2 combobox (input + listbox) over the project's verse
// search (GET /api/v1/projects/<id>/verses/search/?q=…, the one page shape). Keyboard: type, ↓/↑ to move, Enter to
// choose, Esc to close; the last option loads the next page when there is one. `data-pick="set"` puts the chosen
// verse id in the input itself (the reference), `data-pick="add"` appends it to the textarea `data-target` (the
// candidates). Without this script the inputs still take typed ids.
(() => {
  "use strict";
  const PAGE_SIZE = 20;

  function picker(input) {
    const list = document.getElementById(input.getAttribute("aria-controls"));
    const status = document.getElementById(input.dataset.status);
    const target = input.dataset.target ? document.getElementById(input.dataset.target) : null;
    let rows = [], next = null, active = -1, timer = null, asked = 0;

    const say = (text) => { status.textContent = text; };
    const open = (yes) => { list.hidden = !yes; input.setAttribute("aria-expanded", yes ? "true" : "false"); };
    const options = () => Array.from(list.children);

    function paint() {
      const items = rows.map((verse, i) => {
        const li = document.createElement("li");
        li.id = `${list.id}-${i}`;
        li.setAttribute("role", "option");
        li.dataset.index = String(i);
        const id = document.createElement("strong");
        id.textContent = verse.verse_id;
        const text = verse.text.length > 90 ? verse.text.slice(0, 89) + "…" : verse.text;
        li.append(id, " — ", text);
        return li;
      });
      if (next) {
        const more = document.createElement("li");
        more.id = `${list.id}-more`;
        more.setAttribute("role", "option");
        more.dataset.more = "1";
        more.textContent = "Show more…";
        items.push(more);
      }
      list.replaceChildren(...items);
      move(Math.min(active, items.length - 1));
      open(items.length > 0);
    }

    function move(index) {
      active = index;
      options().forEach((li, i) => li.setAttribute("aria-selected", i === index ? "true" : "false"));
      const current = options()[index];
      if (current) {
        input.setAttribute("aria-activedescendant", current.id);
        current.scrollIntoView({block: "nearest"});
      } else {
        input.removeAttribute("aria-activedescendant");
      }
    }

    async function load(url, append) {
      const mine = ++asked;
      let body;
      try {
        const res = await fetch(url, {credentials: "same-origin", headers: {Accept: "application/json"}});
        body = await res.json();
        if (!res.ok) throw new Error(body.detail || JSON.stringify(body));
      } catch (err) {
        if (mine === asked) say(`Search failed: ${err.message}`);
        return;
      }
      if (mine !== asked) return;  // an answer to an older query
      rows = append ? rows.concat(body.results) : body.results;
      next = body.next;
      if (!append) active = -1;
      paint();
      say(body.count === 0 ? "No verse matches." :
        `${body.count} verse(s) match; showing ${rows.length}. ↓ and Enter to choose.`);
    }

    function search() {
      const q = input.dataset.pick === "set" || input.value ? input.value.trim() : "";
      load(`${input.dataset.search}?q=${encodeURIComponent(q)}&page_size=${PAGE_SIZE}`, false);
    }

    function choose(index) {
      const li = options()[index];
      if (!li) return;
      if (li.dataset.more) {
        load(next, true);
        return;
      }
      const verse = rows[Number(li.dataset.index)];
      if (input.dataset.pick === "set") {
        input.value = verse.verse_id;
        say(`Reference: ${verse.verse_id}.`);
      } else {
        const have = target.value.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
        if (!have.includes(verse.verse_id)) {
          target.value = (target.value.trim() ? target.value.replace(/\s*$/, "\n") : "") + verse.verse_id;
        }
        input.value = "";
        const n = target.value.split(/[\n,]/).map((s) => s.trim()).filter(Boolean).length;
        say(`Added ${verse.verse_id}; ${n} candidate(s) listed.`);
      }
      open(false);
    }

    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(search, 150);
    });
    input.addEventListener("keydown", (event) => {
      const n = options().length;
      if (event.key === "ArrowDown") {
        event.preventDefault();
        if (list.hidden) { search(); return; }
        move(n ? (active + 1) % n : -1);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        move(n ? (active - 1 + n) % n : -1);
      } else if (event.key === "Enter" && !list.hidden && active >= 0) {
        event.preventDefault();  // choosing, not submitting the form
        choose(active);
      } else if (event.key === "Escape" && !list.hidden) {
        event.preventDefault();
        open(false);
      }
    });
    list.addEventListener("mousedown", (event) => {
      const li = event.target.closest("li[role=option]");
      if (li) {
        event.preventDefault();  // keep the focus in the input
        choose(options().indexOf(li));
      }
    });
    input.addEventListener("blur", () => setTimeout(() => open(false), 100));
  }

  document.querySelectorAll("input[data-verse-picker]").forEach(picker);
})();
