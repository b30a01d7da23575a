// Shows the chosen methods' declared parameters (name, type, default, range) under the launch form, and for
// a model parameter the models this installation has (the one a missing default gives way to).
(function () {
  "use strict";
  const specs = JSON.parse(document.getElementById("method-specs").textContent);
  const help = document.getElementById("param-help");
  const models = specs.models || [];
  function describe(list, name) {
    const spec = list.find((s) => s.name === name);
    if (!spec) return "";
    const params = spec.params.map((p) => {
      let range = "";
      if (p.choices) range = ` one of ${p.choices.join(", ")}`;
      else if (p.min !== undefined || p.max !== undefined) range = ` ${p.min ?? "…"}–${p.max ?? "…"}`;
      let here = "";
      if (p.type === "model") {
        const vectors = models.filter((m) => m.kind === "word vectors" && spec.languages.includes(m.language));
        const names = (p.default !== null ? vectors : models).map((m) => m.name);
        here = `; installed: ${names.join(", ") || "none"}`;
        if (p.default !== null && !models.some((m) => m.name === p.default) && names.length)
          here += ` — ${p.default} is not installed, so the run uses ${names[0]}`;
      }
      return `${p.name} (${p.type}${range}, default ${JSON.stringify(p.default)}${here})`;
    });
    return `${name}: ${params.length ? params.join("; ") : "no parameters"}${spec.needs_gpu ? " · runs on the GPU queue" : ""}.`;
  }
  function update() {
    const r = document.getElementById("id_retriever").value;
    const rr = document.getElementById("id_reranker").value;
    help.textContent = [describe(specs.retrievers, r), rr ? describe(specs.rerankers, rr) : ""].filter(Boolean).join(" ");
  }
  document.getElementById("id_retriever").addEventListener("change", update);
  document.getElementById("id_reranker").addEventListener("change", update);
  update();
})();
