"""Stored expected results (``perf/expected/*.yaml``) and the check that re-runs them (no Django).

A file holds what is needed to re-run a figure and judge it::

    name: suite-dev
    command: manage.py evaluate --suite --methods bm25-lemma,... --benchmarks loci-similes,lucan-vergil
    suite: {methods: [...], benchmarks: [...], corpus_dir: null, depth: 1000, rerank_depth: 100}
    tolerance: 0.0005            # absolute, per figure
    figures: {loci-similes: {bm25-lemma: {R@10: 0.931, RR@10: 0.875, ...}}, ...}
    measured: {date: ..., machine: ..., libraries: {...}, seconds: ...}

:func:`run_expected` re-runs the suite exactly as the file says and :func:`drift` lists every figure that moved
by more than the tolerance (or is missing); an empty list means the stored figures still hold. Docs quote these
files, so a quoted figure is one that can be re-run on demand.
"""
from __future__ import annotations

import math
from pathlib import Path

from . import suite as S

FIGURES = ("R@1", "R@10", "R@100", "R@1000", "RR@10", "nDCG@10")


def load(path) -> dict:
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    for key in ("name", "command", "suite", "figures", "tolerance"):
        if key not in data:
            raise ValueError(f"{Path(path).name}: no {key!r} entry")
    return data


def figures_of(report: dict) -> dict:
    """``{benchmark: {method: {figure: value}}}`` rounded to 4 places, the form stored in the files."""
    out: dict = {}
    for bname, rows in report["rows"].items():
        for spec, r in rows.items():
            vals = {m: round(r["mean"][m], 4) for m in FIGURES}
            vals["global@1000"] = round(r["global_recall"]["1000"], 4)
            out.setdefault(bname, {})[spec] = vals
    return out


def run_expected(spec: dict, *, progress=None) -> dict:
    s = spec["suite"]
    benches = {}
    for name in s["benchmarks"]:
        if name not in S.BENCHMARKS:
            raise ValueError(f"unknown benchmark {name!r}: one of {', '.join(S.BENCHMARKS)}")
        kw = {"corpus_dir": s.get("corpus_dir")} if name == "loci-similes" else {}
        benches[name] = S.BENCHMARKS[name](**kw)
    return S.run_suite(s["methods"], benches, depth=s.get("depth", 1000), rerank_depth=s.get("rerank_depth", 100),
                       n_resamples=s.get("n_resamples", 2000), progress=progress)


def drift(expected: dict, report: dict) -> list[str]:
    got = figures_of(report)
    tol = float(expected["tolerance"])
    out = []
    for bname, methods in expected["figures"].items():
        for spec, figs in methods.items():
            for fig, want in figs.items():
                have = got.get(bname, {}).get(spec, {}).get(fig)
                if have is None or (isinstance(have, float) and math.isnan(have)):
                    out.append(f"{bname} / {spec} / {fig}: expected {want}, not measured")
                elif abs(have - float(want)) > tol:
                    out.append(f"{bname} / {spec} / {fig}: expected {want}, measured {have} "
                               f"(Δ {have - float(want):+.4f} > {tol})")
    return out


def render(name: str, command: str, suite_args: dict, report: dict, *, tolerance: float, measured: dict) -> str:
    import yaml

    return yaml.safe_dump({"name": name, "command": command, "suite": suite_args, "tolerance": tolerance,
                           "figures": figures_of(report), "measured": measured}, sort_keys=False,
                          allow_unicode=True)
