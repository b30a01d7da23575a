"""Dependency-free SVG plots for run pages: Recall@k curves (log-k axis, ±1 std bands) and P/R/F1 vs k
(retrieval-only and retrieve-and-rerank). Output is a standalone ``<svg>`` string."""
from __future__ import annotations

import math
from html import escape

PALETTE = ("#1b7f79", "#c05621", "#2b6cb0", "#6b46c1", "#b7791f", "#2f855a", "#9b2c2c", "#4a5568")


def _scale(v, lo, hi, a, b):
    return a + (v - lo) / (hi - lo) * (b - a) if hi > lo else (a + b) / 2


def line_chart_svg(series: list[dict], *, title: str = "", x_label: str = "k", y_label: str = "",
                   log_x: bool = True, y_range=(0.0, 1.0), width: int = 560, height: int = 340) -> str:
    """Generic chart. ``series``: ``[{"label", "x": [...], "y": [...], "std": [...] | None, "dash": bool}]``;
    ``None`` y values break the line."""
    ml, mr, mt, mb = 56, 150, 30 if title else 14, 44
    pw, ph = width - ml - mr, height - mt - mb
    xs = [x for s in series for x, y in zip(s["x"], s["y"]) if y is not None]
    if not xs:
        xs = [1, 10]
    fx = (lambda v: math.log10(v)) if log_x else (lambda v: v)
    x0, x1 = fx(min(xs)), fx(max(xs))
    y0, y1 = y_range
    X = lambda v: _scale(fx(v), x0, x1, ml, ml + pw)
    Y = lambda v: _scale(min(max(v, y0), y1), y0, y1, mt + ph, mt)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img">']
    if title:
        out.append(f'<text x="{ml}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>')
    out.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i in range(6):
        v = y0 + (y1 - y0) * i / 5
        y = Y(v)
        out.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.2f}</text>')
    ticks = sorted(set(x for s in series for x in s["x"]))
    for t in ticks:
        x = X(t)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{mt + ph}" y2="{mt + ph + 4}" stroke="#999"/>')
        out.append(f'<text x="{x:.1f}" y="{mt + ph + 16}" text-anchor="middle">{t}</text>')
    out.append(f'<text x="{ml + pw / 2}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(14,{mt + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)}</text>')
    for i, s in enumerate(series):
        col = s.get("color") or PALETTE[i % len(PALETTE)]
        pts = [(x, y, (s.get("std") or [None] * len(s["x"]))[j]) for j, (x, y) in enumerate(zip(s["x"], s["y"]))
               if y is not None]
        if not pts:
            continue
        if any(p[2] for p in pts):
            upper = [f"{X(x):.1f},{Y(y + (sd or 0)):.1f}" for x, y, sd in pts]
            lower = [f"{X(x):.1f},{Y(y - (sd or 0)):.1f}" for x, y, sd in reversed(pts)]
            out.append(f'<polygon points="{" ".join(upper + lower)}" fill="{col}" fill-opacity="0.15" stroke="none"/>')
        d = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y, _ in pts)
        dash = ' stroke-dasharray="5,3"' if s.get("dash") else ""
        out.append(f'<polyline points="{d}" fill="none" stroke="{col}" stroke-width="2"{dash}/>')
        for x, y, _ in pts:
            out.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="2.5" fill="{col}"/>')
        ly = mt + 12 + 16 * i
        out.append(f'<line x1="{ml + pw + 10}" x2="{ml + pw + 30}" y1="{ly}" y2="{ly}" stroke="{col}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{ml + pw + 34}" y="{ly + 4}">{escape(str(s["label"]))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def recall_curve_svg(reports: list[dict], views=("all",), metric: str = "recall", title: str = "Recall@k") -> str:
    """Recall@k (or MRR@k) curves of one or more retrieval reports, mean ± 1 std over folds."""
    series = []
    for rep in reports:
        for v in views:
            ks = [k for k in rep["ks"] if rep["metrics"][v].get(f"{metric}@{k}", {}).get("mean") is not None]
            series.append({"label": rep["method"]["name"] + ("" if v == "all" else f" {v}"), "x": ks,
                           "y": [rep["metrics"][v][f"{metric}@{k}"]["mean"] for k in ks],
                           "std": [rep["metrics"][v][f"{metric}@{k}"]["std"] for k in ks], "dash": v == "cf."})
    return line_chart_svg(series, title=title, y_label=f"{metric}@k")


def prf_vs_k_svg(pair_rep: dict, view: str = "all", title: str | None = None) -> str:
    """Precision, recall and F1 vs retrieval depth k from a pairwise report's sweep: solid = retrieval-only,
    dashed = retrieve-and-rerank (Figure 12 shape)."""
    rows = pair_rep["sweep"][view]
    ks = [r["k"] for r in rows]
    series = []
    for stage, dash in (("ret", False), ("rer", True)):
        if stage not in rows[0]:
            continue
        for j, m in enumerate(("p", "r", "f1")):
            series.append({"label": f"{m.upper()} ({'retrieval' if stage == 'ret' else 'rerank'})", "x": ks,
                           "y": [r[stage][m]["mean"] for r in rows], "std": [r[stage][m]["std"] for r in rows],
                           "dash": dash, "color": PALETTE[j]})
    return line_chart_svg(series, title=title or f"P/R/F1 vs k ({view})", y_label="score")
