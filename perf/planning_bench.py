"""The planning page's simulation with its defaults: CPU and wall seconds, and the answer it gives (issue 46).

Usage: .venv/bin/python perf/planning_bench.py [--write perf/expected/annotation/planning_defaults.yaml]

What the `annotation.plan` job computes with the form's defaults on a project whose first gold batch is the DBBE
gold of reference 16977 1 (99 candidates) and no judgements of its own (the DBBE agreement calibrates the noise):
`pair_selection.compare_designs` over 3 seeds, 11 annotators of noise 0.5–1.5, target ρ 0.95, the stop-rule
simulation off (it runs on demand). The job adds a few database reads to this. Target: ≤ 30 s.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from adaptive_bench import GOLD_SCALE, gold_theta  # noqa: E402


def main() -> None:
    from annotation.stats.pair_selection import (
        DBBE_AGREEMENT,
        annotator_scales,
        calibrate_strength_scale,
        compare_designs,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    shape = gold_theta(None)[1] / GOLD_SCALE
    annotators = 11
    scales = np.array([0.5 + k / (annotators - 1) for k in range(annotators)])  # jobs.plan_job's, noise 1.0
    t, c = time.perf_counter(), time.process_time()
    theta = calibrate_strength_scale(shape, DBBE_AGREEMENT, annotator_scales(annotators)) * shape  # jobs.plan_job
    out = compare_designs(theta, annotator_scales=scales, seeds=3, target=0.95)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    figures = {"wall s": round(wall, 1), "CPU s": round(cpu, 1), "judgements needed for ρ ≥ 0.95": out["needed"],
               "exhaustive": {k: round(v, 4) if isinstance(v, float) else v for k, v in out["exhaustive"].items()}}
    print(figures)
    if args.write:
        import yaml

        args.write.write_text(yaml.safe_dump({
            "title": "The planning page's simulation with its defaults (issue 46)",
            "description": __doc__.split("\n\n")[2].replace("\n", " "),
            "command": " ".join([".venv/bin/python perf/planning_bench.py", *sys.argv[1:]]),
            "measured": {"date": datetime.date.today().isoformat(), "load_average": round(os.getloadavg()[0], 1)},
            "figures": figures}, sort_keys=False, allow_unicode=True), encoding="utf-8")


if __name__ == "__main__":
    main()
