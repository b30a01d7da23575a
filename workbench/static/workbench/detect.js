// Shows the chosen methods' declared parameters (name, type, default, range) under the launch form.
(function () {
  "use strict";
  const specs = JSON.parse(document.getElementById("method-specs").textContent);
  const help = document.getElementById("param-help");
  function describe(list, name) {
    const spec = list.find((s) => s.name === name);
    if (!spec) return "";
    const params = spec.params.map((p) => {
      let range = "";
      if (p.choices) range = ` one of ${p.choices.join(", ")}`;
      else if (p.min !== undefined || p.max !== undefined) range = ` ${p.min ?? "…"}–${p.max ?? "…"}`;
      return `${p.name} (${p.type}${range}, default ${JSON.stringify(p.default)})`;
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
