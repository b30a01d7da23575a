"""Plots of the Greek STS benchmark and the DBBE pilots: P/R/F1 vs threshold and predicted vs gold. Drawing is
:mod:`frontend.svg`'s (the project's one SVG module, pure Python); this module only turns results into series."""
from __future__ import annotations

from typing import Sequence

from frontend.svg import line_chart, scatter


def _get(row, key):
    return row[key] if isinstance(row, dict) else getattr(row, key)


def threshold_plot_svg(rows: Sequence, title: str = "Precision / recall / F1 vs threshold",
                       reference_f1: Sequence[tuple[float, float]] | None = None,
                       reference_label: str = "paper F1", width: int = 520, height: int = 320) -> str:
    """Lines for precision, recall, F1 over thresholds (rows: SweepRow or dicts), the best F1 marked;
    ``reference_f1``: optional (threshold, f1) points drawn dashed (e.g. the paper's table)."""
    series = {label: [(_get(r, "threshold"), _get(r, key)) for r in rows]
              for key, label in (("precision", "precision"), ("recall", "recall"), ("f1", "F1"))}
    styles = {}
    if reference_f1:
        series[reference_label] = [(t, f) for t, f in reference_f1]
        styles[reference_label] = {"dash": True, "color": "#555"}
    marks = []
    if rows:
        best = max(rows, key=lambda r: (_get(r, "f1"), -_get(r, "threshold")))
        marks.append((_get(best, "threshold"), _get(best, "f1"),
                      f"best F1 {_get(best, 'f1'):.2f} @ {_get(best, 'threshold'):.2f}"))
    return line_chart(series, title=title, xlabel="threshold", ylabel="score", ymin=0.0, ymax=1.0, width=width,
                      height=height, styles=styles, marks=marks)


def scatter_svg(predicted: Sequence[float], gold: Sequence[float], groups: Sequence[str] | None = None,
                title: str = "Predicted vs gold", width: int = 420, height: int = 380) -> str:
    """Scatter of predicted (x) vs gold (y) with the diagonal; one colour per group (reference)."""
    xs = [float(v) for v in predicted]
    return scatter(list(zip(xs, (float(v) for v in gold))), title=title, xlabel="predicted", ylabel="gold",
                   width=width, height=height, lo=min([0.0] + xs), hi=max([1.0] + xs),
                   groups=list(groups) if groups is not None else None)
