"""Standalone SVG plots (pure Python strings, no JS): P/R/F1 vs threshold, and predicted vs gold scatter."""
from __future__ import annotations

from html import escape
from typing import Sequence

_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


class _Frame:
    def __init__(self, width: int, height: int, x_range=(0.0, 1.0), y_range=(0.0, 1.0), margin=(50, 20, 20, 45)):
        self.w, self.h = width, height
        self.left, self.right, self.top, self.bottom = margin
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range

    def x(self, v: float) -> float:
        return self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - self.right)

    def y(self, v: float) -> float:
        return self.h - self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.top - self.bottom)

    def axes(self, xlabel: str, ylabel: str, title: str) -> list[str]:
        out = [f'<rect x="{self.left}" y="{self.top}" width="{self.w - self.left - self.right}" '
               f'height="{self.h - self.top - self.bottom}" fill="none" stroke="#333"/>']
        for i in range(6):
            v = self.x0 + i * (self.x1 - self.x0) / 5
            out.append(f'<line x1="{self.x(v):.1f}" y1="{self.y(self.y0):.1f}" x2="{self.x(v):.1f}" '
                       f'y2="{self.y(self.y0) + 4:.1f}" stroke="#333"/>')
            out.append(f'<text x="{self.x(v):.1f}" y="{self.y(self.y0) + 16:.1f}" font-size="10" '
                       f'text-anchor="middle">{v:.1f}</text>')
            u = self.y0 + i * (self.y1 - self.y0) / 5
            out.append(f'<line x1="{self.x(self.x0):.1f}" y1="{self.y(u):.1f}" x2="{self.x(self.x1):.1f}" '
                       f'y2="{self.y(u):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{self.x(self.x0) - 6:.1f}" y="{self.y(u) + 3:.1f}" font-size="10" '
                       f'text-anchor="end">{u:.1f}</text>')
        out.append(f'<text x="{(self.left + self.w - self.right) / 2:.1f}" y="{self.h - 8}" font-size="11" '
                   f'text-anchor="middle">{escape(xlabel)}</text>')
        out.append(f'<text x="12" y="{(self.top + self.h - self.bottom) / 2:.1f}" font-size="11" text-anchor="middle" '
                   f'transform="rotate(-90 12 {(self.top + self.h - self.bottom) / 2:.1f})">{escape(ylabel)}</text>')
        out.append(f'<text x="{(self.left + self.w - self.right) / 2:.1f}" y="14" font-size="12" '
                   f'text-anchor="middle" font-weight="bold">{escape(title)}</text>')
        return out


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}" font-family="sans-serif">'
            + "".join(body) + "</svg>")


def _get(row, key):
    return row[key] if isinstance(row, dict) else getattr(row, key)


def threshold_plot_svg(rows: Sequence, title: str = "Precision / recall / F1 vs threshold",
                       reference_f1: Sequence[tuple[float, float]] | None = None,
                       reference_label: str = "paper F1", width: int = 520, height: int = 320) -> str:
    """Lines for precision, recall, F1 over thresholds (rows: SweepRow or dicts), the best F1 marked;
    ``reference_f1``: optional (threshold, f1) points drawn dashed (e.g. the paper's table)."""
    fr = _Frame(width, height, margin=(50, 110, 24, 40))
    body = fr.axes("threshold", "score", title)
    series = [("precision", _PALETTE[0]), ("recall", _PALETTE[1]), ("f1", _PALETTE[2])]
    for i, (key, colour) in enumerate(series):
        pts = " ".join(f"{fr.x(_get(r, 'threshold')):.1f},{fr.y(_get(r, key)):.1f}" for r in rows)
        body.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        body.append(f'<line x1="{width - 100}" y1="{30 + 16 * i}" x2="{width - 80}" y2="{30 + 16 * i}" '
                    f'stroke="{colour}" stroke-width="2"/><text x="{width - 76}" y="{34 + 16 * i}" '
                    f'font-size="10">{key.upper() if key == "f1" else key}</text>')
    if reference_f1:
        pts = " ".join(f"{fr.x(t):.1f},{fr.y(f):.1f}" for t, f in reference_f1)
        body.append(f'<polyline points="{pts}" fill="none" stroke="#555" stroke-width="1.5" stroke-dasharray="4 3"/>')
        body.append(f'<line x1="{width - 100}" y1="78" x2="{width - 80}" y2="78" stroke="#555" stroke-dasharray="4 3"/>'
                    f'<text x="{width - 76}" y="82" font-size="10">{escape(reference_label)}</text>')
    if rows:
        best = max(rows, key=lambda r: (_get(r, "f1"), -_get(r, "threshold")))
        bx, by = fr.x(_get(best, "threshold")), fr.y(_get(best, "f1"))
        body.append(f'<circle cx="{bx:.1f}" cy="{by:.1f}" r="4" fill="{_PALETTE[2]}"/>'
                    f'<text x="{bx + 6:.1f}" y="{by - 6:.1f}" font-size="10">best F1 {_get(best, "f1"):.2f} '
                    f'@ {_get(best, "threshold"):.2f}</text>')
    return _svg(width, height, body, title)


def scatter_svg(predicted: Sequence[float], gold: Sequence[float], groups: Sequence[str] | None = None,
                title: str = "Predicted vs gold", width: int = 420, height: int = 380) -> str:
    """Scatter of predicted (x) vs gold (y) with the diagonal; one colour per group (reference)."""
    xs = [float(v) for v in predicted]
    lo = min([0.0] + xs)
    hi = max([1.0] + xs)
    fr = _Frame(width, height, x_range=(lo, hi), margin=(50, 120, 24, 40))
    body = fr.axes("predicted", "gold", title)
    body.append(f'<line x1="{fr.x(max(lo, 0)):.1f}" y1="{fr.y(max(lo, 0)):.1f}" x2="{fr.x(1):.1f}" y2="{fr.y(1):.1f}" '
                f'stroke="#999" stroke-dasharray="3 3"/>')
    groups = list(groups) if groups is not None else ["all"] * len(xs)
    names = list(dict.fromkeys(groups))
    colour = {g: _PALETTE[i % len(_PALETTE)] for i, g in enumerate(names)}
    for x, y, g in zip(xs, gold, groups):
        body.append(f'<circle cx="{fr.x(x):.1f}" cy="{fr.y(float(y)):.1f}" r="2.5" fill="{colour[g]}" '
                    f'fill-opacity="0.7"><title>{escape(str(g))}: {x:.3f} / {float(y):.3f}</title></circle>')
    for i, g in enumerate(names):
        body.append(f'<circle cx="{width - 110}" cy="{30 + 16 * i}" r="4" fill="{colour[g]}"/>'
                    f'<text x="{width - 100}" y="{34 + 16 * i}" font-size="10">{escape(str(g))}</text>')
    return _svg(width, height, body, title)
