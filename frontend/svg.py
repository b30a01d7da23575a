"""Small server-side SVG charts (no JavaScript, no CDN): heatmap, lines, intervals, histogram.

Every function returns an SVG string with a <title> for accessibility; values that are None or NaN
are drawn as gaps / grey cells with "undefined" in their tooltip.
"""
from __future__ import annotations

import math
from html import escape
from typing import Sequence

PALETTE = ["#1f5fa8", "#c2410c", "#15803d", "#7c3aed", "#b91c1c", "#0e7490", "#a16207", "#be185d", "#4d7c0f",
           "#334155", "#9333ea", "#0369a1"]


def _ok(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
            f'<style>text{{font:11px system-ui,sans-serif;fill:#1d232b}}</style>{"".join(body)}</svg>')


def _diverging(value: float, lo: float = -1.0, hi: float = 1.0) -> str:
    """Blue for high, white at 0, red for negative."""
    if not _ok(value):
        return "#d1d5db"
    t = max(min((value - lo) / (hi - lo), 1.0), 0.0) * 2 - 1
    if t >= 0:
        r, g, b = 255 - int(t * (255 - 31)), 255 - int(t * (255 - 95)), 255 - int(t * (255 - 168))
    else:
        t = -t
        r, g, b = 255 - int(t * (255 - 179)), 255 - int(t * (255 - 38)), 255 - int(t * (255 - 30))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(matrix: Sequence[Sequence[float | None]], labels: Sequence[str], *, title: str,
            counts: Sequence[Sequence[int]] | None = None, cell: int = 34) -> str:
    n = len(labels)
    longest = max((len(label) for label in labels), default=4)
    pad_left = pad_top = 12 + int(6.2 * longest)
    width, height = pad_left + n * cell + 10 + int(3.2 * longest), pad_top + n * cell + 10
    body = []
    for i, label in enumerate(labels):
        y = pad_top + i * cell + cell / 2 + 4
        body.append(f'<text x="{pad_left - 6}" y="{y:.0f}" text-anchor="end">{escape(label)}</text>')
        x = pad_left + i * cell + cell / 2
        body.append(f'<text transform="translate({x:.0f},{pad_top - 6}) rotate(-60)">{escape(label)}</text>')
    for i in range(n):
        for j in range(n):
            value = matrix[i][j]
            x, y = pad_left + j * cell, pad_top + i * cell
            shown = "undefined" if not _ok(value) else f"{value:.2f}"
            tip = f"{labels[i]} × {labels[j]}: κ = {shown}"
            if counts is not None:
                tip += f" on {counts[i][j]} shared pairs"
            body.append(f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" fill="{_diverging(value)}">'
                        f'<title>{escape(tip)}</title></rect>')
            if i != j and _ok(value):
                body.append(f'<text x="{x + cell / 2:.0f}" y="{y + cell / 2 + 4:.0f}" text-anchor="middle">{value:.2f}</text>')
    return _svg(width, height, title, body)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values inside [lo, hi]: steps of 1, 2, 2.5 or 5 × 10^k, about ``target`` of them
    (0, 0.25, 0.5 … rather than 0.05, 0.225, 0.4 …)."""
    if not (_ok(lo) and _ok(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10) + 0.0)
        v += step
    return ticks


def _label(v: float) -> str:
    return f"{v:.6g}"


def _axis(body, x0, y0, w, h, xmin, xmax, ymin, ymax, xlabel, ylabel, yticks=5):
    body.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}" stroke="#888"/>')
    body.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + h}" stroke="#888"/>')
    for v in nice_ticks(ymin, ymax, yticks + 1):
        y = y0 + h - h * (v - ymin) / (ymax - ymin)
        body.append(f'<line x1="{x0 - 3}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(v)}</text>')
    for v in nice_ticks(xmin, xmax, 5):
        x = x0 + w * (v - xmin) / (xmax - xmin)
        body.append(f'<text x="{x:.1f}" y="{y0 + h + 14}" text-anchor="middle">{_label(v)}</text>')
    body.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 30}" text-anchor="middle">{escape(xlabel)}</text>')
    body.append(f'<text transform="translate(12,{y0 + h / 2}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>')


def line_chart(series: dict[str, Sequence[tuple[float, float | None]]], *, title: str, xlabel: str, ylabel: str,
               ymin: float | None = None, ymax: float | None = None, width: int = 560, height: int = 280) -> str:
    points = [(x, y) for values in series.values() for x, y in values if _ok(y)]
    body: list[str] = []
    legend = 30 + int(6.2 * max((len(str(name)) for name in series), default=4))
    width += max(legend - 130, 0)
    x0, y0, w, h = 56, 14, width - 56 - legend, height - 14 - 44
    if not points:
        body.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no data yet</text>')
        return _svg(width, height, title, body)
    xmin, xmax = min(p[0] for p in points), max(p[0] for p in points)
    if xmax == xmin:
        xmax = xmin + 1
    lo = min(p[1] for p in points) if ymin is None else ymin
    hi = max(p[1] for p in points) if ymax is None else ymax
    if hi == lo:
        hi = lo + 1
    _axis(body, x0, y0, w, h, xmin, xmax, lo, hi, xlabel, ylabel)
    for k, (name, values) in enumerate(series.items()):
        colour = PALETTE[k % len(PALETTE)]
        segment: list[str] = []
        segments = []
        for x, y in values:
            if not _ok(y):
                if segment:
                    segments.append(segment)
                segment = []
                continue
            px = x0 + w * (x - xmin) / (xmax - xmin)
            py = y0 + h - h * (min(max(y, lo), hi) - lo) / (hi - lo)
            segment.append(f"{px:.1f},{py:.1f}")
        if segment:
            segments.append(segment)
        for seg in segments:
            body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(seg)}"/>')
            if len(seg) == 1:
                px, py = seg[0].split(",")
                body.append(f'<circle cx="{px}" cy="{py}" r="3" fill="{colour}"/>')
        ly = y0 + 12 + 16 * k
        body.append(f'<rect x="{x0 + w + 12}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>'
                    f'<text x="{x0 + w + 26}" y="{ly}">{escape(str(name))}</text>')
    return _svg(width, height, title, body)


def interval_chart(labels: Sequence[str], values: Sequence[float], lows: Sequence[float | None],
                   highs: Sequence[float | None], *, title: str, xlabel: str, width: int = 560,
                   row: int = 14, tooltips: Sequence[str] | None = None) -> str:
    """Ranked dot-and-whisker chart: one row per item, dot at value, bar from low to high."""
    n = len(labels)
    x0, y0 = 150, 10
    w, h = width - x0 - 20, n * row
    height = y0 + h + 40
    finite = [v for v in list(values) + [v for v in lows if _ok(v)] + [v for v in highs if _ok(v)] if _ok(v)]
    body: list[str] = []
    if not finite:
        return _svg(width, 60, title, ['<text x="10" y="30">no data yet</text>'])
    lo, hi = min(finite), max(finite)
    if hi == lo:
        hi = lo + 1
    scale = lambda v: x0 + w * (v - lo) / (hi - lo)  # noqa: E731
    for v in nice_ticks(lo, hi, 5):
        x = scale(v)
        body.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + h}" stroke="#eee"/>'
                    f'<text x="{x:.1f}" y="{y0 + h + 14}" text-anchor="middle">{_label(v)}</text>')
    body.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 30}" text-anchor="middle">{escape(xlabel)}</text>')
    for i, label in enumerate(labels):
        y = y0 + i * row + row / 2
        tip = escape(tooltips[i]) if tooltips else escape(label)
        body.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        if _ok(lows[i]) and _ok(highs[i]):
            body.append(f'<line x1="{scale(lows[i]):.1f}" y1="{y:.1f}" x2="{scale(highs[i]):.1f}" y2="{y:.1f}" '
                        f'stroke="#94a3b8" stroke-width="3"/>')
        body.append(f'<circle cx="{scale(values[i]):.1f}" cy="{y:.1f}" r="3.5" fill="#1f5fa8"><title>{tip}</title></circle>')
    return _svg(width, height, title, body)


def histogram(values: Sequence[float], *, title: str, xlabel: str, bins: int = 20, lo: float = 0.0, hi: float = 1.0,
              width: int = 560, height: int = 220) -> str:
    counts = [0] * bins
    for v in values:
        if _ok(v):
            k = min(int((v - lo) / (hi - lo) * bins), bins - 1)
            counts[max(k, 0)] += 1
    top = max(counts) or 1
    x0, y0, w, h = 46, 10, width - 60, height - 54
    body: list[str] = []
    _axis(body, x0, y0, w, h, lo, hi, 0, top, xlabel, "count", yticks=4)
    bw = w / bins
    for k, c in enumerate(counts):
        bh = h * c / top
        body.append(f'<rect x="{x0 + k * bw + 1:.1f}" y="{y0 + h - bh:.1f}" width="{bw - 2:.1f}" height="{bh:.1f}" '
                    f'fill="#1f5fa8"><title>{lo + k * (hi - lo) / bins:.2f}–{lo + (k + 1) * (hi - lo) / bins:.2f}: {c}</title></rect>')
    return _svg(width, height, title, body)


def scatter(points: Sequence[tuple[float, float]], *, title: str, xlabel: str, ylabel: str, diagonal: bool = True,
            width: int = 420, height: int = 320, lo: float = 0.0, hi: float = 1.0) -> str:
    x0, y0, w, h = 56, 12, width - 70, height - 56
    body: list[str] = []
    _axis(body, x0, y0, w, h, lo, hi, lo, hi, xlabel, ylabel)
    if diagonal:
        body.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0}" stroke="#bbb" stroke-dasharray="4 3"/>')
    for x, y in points:
        if _ok(x) and _ok(y):
            px = x0 + w * (min(max(x, lo), hi) - lo) / (hi - lo)
            py = y0 + h - h * (min(max(y, lo), hi) - lo) / (hi - lo)
            body.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="#1f5fa8" fill-opacity=".7"/>')
    return _svg(width, height, title, body)
