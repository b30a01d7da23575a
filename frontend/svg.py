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


def _axis(body, x0, y0, w, h, xmin, xmax, ymin, ymax, xlabel, ylabel, yticks=5, xticks=None):
    """Axes, grid and labels. ``xticks``: (position in data units, label) pairs; default round ticks."""
    body.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}" stroke="#888"/>')
    body.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + h}" stroke="#888"/>')
    for v in nice_ticks(ymin, ymax, yticks + 1):
        y = y0 + h - h * (v - ymin) / (ymax - ymin)
        body.append(f'<line x1="{x0 - 3}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{_label(v)}</text>')
    if xticks is None:
        xticks = [(v, _label(v)) for v in nice_ticks(xmin, xmax, 5)]
    last = -1e9
    for v, label in xticks:
        x = x0 + w * (v - xmin) / (xmax - xmin)
        if x - last < 7 * len(str(label)) + 6:  # no overlapping labels on a crowded (log) axis
            continue
        last = x
        body.append(f'<text x="{x:.1f}" y="{y0 + h + 14}" text-anchor="middle">{escape(str(label))}</text>')
    body.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 30}" text-anchor="middle">{escape(xlabel)}</text>')
    body.append(f'<text transform="translate(12,{y0 + h / 2}) rotate(-90)" text-anchor="middle">{escape(ylabel)}</text>')


def _runs(points: list[tuple[float, float | None, float | None]]) -> list[list[tuple[float, float, float | None]]]:
    """Split (x, y, std) points into runs of defined y (a None/NaN y breaks the line)."""
    runs, run = [], []
    for x, y, sd in points:
        if not _ok(y):
            if run:
                runs.append(run)
            run = []
            continue
        run.append((x, y, sd if _ok(sd) else None))
    if run:
        runs.append(run)
    return runs


def _line(run, px, py, colour: str, dash: str) -> list[str]:
    """One unbroken run of (x, y, std) points: its ±std band, its line, a dot when it is a single point."""
    out = []
    if any(sd for _, _, sd in run):
        upper = [f"{px(x):.1f},{py(y + (sd or 0)):.1f}" for x, y, sd in run]
        lower = [f"{px(x):.1f},{py(y - (sd or 0)):.1f}" for x, y, sd in reversed(run)]
        out.append(f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
    coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _ in run)
    out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{coords}"/>')
    if len(run) == 1:
        out.append(f'<circle cx="{px(run[0][0]):.1f}" cy="{py(run[0][1]):.1f}" r="3" fill="{colour}"/>')
    return out


def line_chart(series: dict[str, Sequence[tuple[float, float | None]]], *, title: str, xlabel: str, ylabel: str,
               ymin: float | None = None, ymax: float | None = None, width: int = 560, height: int = 280,
               log_x: bool = False, styles: dict[str, dict] | None = None,
               marks: Sequence[tuple[float, float, str]] = ()) -> str:
    """Lines, one per series (``name -> [(x, y), ...]``; a None/NaN y leaves a gap).

    ``log_x``: log10 x axis with a tick at every x value. ``styles[name]`` may set ``color``, ``dash`` (bool)
    and ``std`` (one value per point: a ±1 std band). ``marks``: (x, y, label) points to annotate.
    """
    styles = styles or {}
    points = [(x, y) for values in series.values() for x, y in values if _ok(y)]
    body: list[str] = []
    legend = 30 + int(6.2 * max((len(str(name)) for name in series), default=4))
    width += max(legend - 130, 0)
    x0, y0, w, h = 56, 14, width - 56 - legend, height - 14 - 44
    if not points:
        body.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no data yet</text>')
        return _svg(width, height, title, body)
    fx = math.log10 if log_x else float
    xmin, xmax = min(fx(p[0]) for p in points), max(fx(p[0]) for p in points)
    if xmax == xmin:
        xmax = xmin + 1
    lo = min(p[1] for p in points) if ymin is None else ymin
    hi = max(p[1] for p in points) if ymax is None else ymax
    if hi == lo:
        hi = lo + 1
    xticks = [(fx(x), f"{x:g}") for x in sorted({p[0] for p in points})] if log_x else None
    _axis(body, x0, y0, w, h, xmin, xmax, lo, hi, xlabel, ylabel, xticks=xticks)

    def px(x):
        return x0 + w * (fx(x) - xmin) / (xmax - xmin)

    def py(y):
        return y0 + h - h * (min(max(y, lo), hi) - lo) / (hi - lo)

    for k, (name, values) in enumerate(series.items()):
        style = styles.get(name, {})
        colour = style.get("color") or PALETTE[k % len(PALETTE)]
        dash = ' stroke-dasharray="5 3"' if style.get("dash") else ""
        stds = list(style.get("std") or [None] * len(values))
        for run in _runs([(x, y, sd) for (x, y), sd in zip(values, stds)]):
            body.extend(_line(run, px, py, colour, dash))
        ly = y0 + 12 + 16 * k
        body.append(f'<line x1="{x0 + w + 10}" y1="{ly - 4}" x2="{x0 + w + 24}" y2="{ly - 4}" stroke="{colour}" '
                    f'stroke-width="3"{dash}/><text x="{x0 + w + 28}" y="{ly}">{escape(str(name))}</text>')
    for x, y, label in marks:
        body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="#1d232b"/>'
                    f'<text x="{px(x) + 6:.1f}" y="{py(y) - 6:.1f}">{escape(label)}</text>')
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
            width: int = 420, height: int = 320, lo: float = 0.0, hi: float = 1.0,
            groups: Sequence[str] | None = None) -> str:
    """Points in [lo, hi]² with the diagonal; ``groups`` (one label per point) colours them and adds a legend."""
    legend = 0
    names: list[str] = []
    if groups is not None:
        names = list(dict.fromkeys(str(g) for g in groups))
        legend = 24 + int(6.2 * max((len(n) for n in names), default=4))
    width += legend
    x0, y0, w, h = 56, 12, width - 70 - legend, height - 56
    body: list[str] = []
    _axis(body, x0, y0, w, h, lo, hi, lo, hi, xlabel, ylabel)
    if diagonal:
        body.append(f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0}" stroke="#bbb" stroke-dasharray="4 3"/>')
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}
    for i, (x, y) in enumerate(points):
        if _ok(x) and _ok(y):
            px = x0 + w * (min(max(x, lo), hi) - lo) / (hi - lo)
            py = y0 + h - h * (min(max(y, lo), hi) - lo) / (hi - lo)
            group = str(groups[i]) if groups is not None else ""
            tip = f"{group + ': ' if group else ''}{x:.3f} / {y:.3f}"
            body.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour.get(group, PALETTE[0])}" '
                        f'fill-opacity=".7"><title>{escape(tip)}</title></circle>')
    for i, name in enumerate(names):
        ly = y0 + 12 + 16 * i
        body.append(f'<circle cx="{x0 + w + 16}" cy="{ly - 4}" r="4" fill="{colour[name]}"/>'
                    f'<text x="{x0 + w + 24}" y="{ly}">{escape(name)}</text>')
    return _svg(width, height, title, body)
