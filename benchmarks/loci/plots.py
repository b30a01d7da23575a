"""Run-page plots of the Loci Similes benchmark: Recall@k curves (log-k axis, ±1 std bands) and P/R/F1 vs k
(retrieval-only and retrieve-and-rerank). Drawing is :mod:`frontend.svg`'s (the project's one SVG module, pure
Python); this module only turns reports into series."""
from __future__ import annotations

from frontend.svg import PALETTE, line_chart


def recall_curve_svg(reports: list[dict], views=("all",), metric: str = "recall", title: str = "Recall@k") -> str:
    """Recall@k (or MRR@k) curves of one or more retrieval reports, mean ± 1 std over folds."""
    series, styles = {}, {}
    for rep in reports:
        for v in views:
            entries = [(k, rep["metrics"][v].get(f"{metric}@{k}") or {}) for k in rep["ks"]]
            entries = [(k, e) for k, e in entries if e.get("mean") is not None]
            label = rep["method"]["name"] + ("" if v == "all" else f" {v}")
            series[label] = [(k, e["mean"]) for k, e in entries]
            styles[label] = {"std": [e.get("std") for _, e in entries], "dash": v == "cf."}
    return line_chart(series, title=title, xlabel="k", ylabel=f"{metric}@k", ymin=0.0, ymax=1.0, log_x=True,
                      styles=styles)


def prf_vs_k_svg(pair_rep: dict, view: str = "all", title: str | None = None) -> str:
    """Precision, recall and F1 vs retrieval depth k from a pairwise report's sweep: solid = retrieval-only,
    dashed = retrieve-and-rerank (Figure 12 shape)."""
    rows = pair_rep["sweep"][view]
    series, styles = {}, {}
    for stage, dash in (("ret", False), ("rer", True)):
        if stage not in rows[0]:
            continue
        for j, m in enumerate(("p", "r", "f1")):
            label = f"{m.upper()} ({'retrieval' if stage == 'ret' else 'rerank'})"
            series[label] = [(r["k"], r[stage][m]["mean"]) for r in rows]
            styles[label] = {"std": [r[stage][m]["std"] for r in rows], "dash": dash, "color": PALETTE[j]}
    return line_chart(series, title=title or f"P/R/F1 vs k ({view})", xlabel="k", ylabel="score", ymin=0.0,
                      ymax=1.0, log_x=True, styles=styles)
