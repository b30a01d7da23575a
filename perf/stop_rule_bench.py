"""The top-k stop rule on simulated adaptive batches (issue 39): how often it stops on a false claim, and where it stops.

Usage: nice -n 10 .venv/bin/python perf/stop_rule_bench.py [--small-runs 900] [--large-runs 100] [--draws 200]
       [--expected perf/expected/annotation/stop_rule.yaml]

Each run is one batch judged under the adaptive design until the rule holds or its pairs run out
(`annotation.stats.pair_selection.simulate_stop_rule`: the service's rule and checking schedule: the Laplace gate, then
exact Pólya-Gamma draws, a new check `recheck_spacing` judgements after one that said "not settled"). Strengths
θ = c · gold of the DBBE STS benchmark (`data/dbbe/STS_benchmark_medievalGreek.tsv`, its three references), c
calibrated per batch so that two of the 11 simulated annotators (noise 0.5 … 1.5) agree on a random pair as often as
the gold's annotators did (Fleiss κ 0.6584 → 0.829, `calibrate_strength_scale`), as perf/adaptive_bench.py does.

* large: whole references (98–99 candidates, 4,753–4,851 pairs), rule "with probability ≥ 0.95, at least 9 of the top
  10 are truly among the 10 strongest, strengths within 0.5 tied";
* small: 6, 8 or 12 candidates drawn from a reference (seeded), rule "top 3, all 3 right, margin 0.5, ≥ 0.95".

A false stop: at the stop, fewer of the reported top k are truly among the top k (within the margin) than the rule
claimed. Prints, per group, the runs, how many stopped, the false-stop rate among the stops, the stopping points as the
share of the batch's pairs judged at the stop (quantiles and a histogram in tenths; the judgements also count the
overlap pairs' second judgements) and the share of runs stopping before 60 % of the
pairs; the CPU time. The simulation's exact checks use `--draws` draws (the service 600): the Monte Carlo error of a
probability near 0.95 is then about 0.015.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STS = ROOT / "data" / "dbbe" / "STS_benchmark_medievalGreek.tsv"
LARGE = dict(k=10, recall=0.9, margin=0.5, level=0.95)
SMALL = dict(k=3, recall=0.9, margin=0.5, level=0.95)
SMALL_SIZES = (6, 8, 12)


def references() -> list[np.ndarray]:
    by_ref: dict[str, list[float]] = {}
    with STS.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by_ref.setdefault(row["verse1_id"], []).append(float(row["normalized_counts"]))
    return [np.array(v) for _, v in sorted(by_ref.items())]


def calibrated(shape: np.ndarray, scales: np.ndarray) -> np.ndarray | None:
    from annotation.stats.pair_selection import DBBE_AGREEMENT, calibrate_strength_scale

    try:
        return calibrate_strength_scale(shape, DBBE_AGREEMENT, scales) * shape
    except ValueError:  # all equal, or the agreement out of reach: another draw
        return None


def summary(runs: list[dict]) -> dict:
    stops = [r for r in runs if r["stopped_at"] is not None]
    shares = np.array([r["judged_pairs"] / r["pairs"] for r in stops])
    false = sum(r["false_stop"] for r in stops)
    hist = np.histogram(shares, bins=np.linspace(0, 1, 11))[0] if len(stops) else np.zeros(10, int)
    return {
        "runs": len(runs), "stopped": len(stops), "false_stops": int(false),
        "false_stop_rate": round(false / len(stops), 4) if stops else None,
        "stopped_before_60pct_of_pairs": round(float((shares < 0.6).sum()) / len(runs), 4),
        "stop_share_of_pairs_quantiles": ({f"q{int(q * 100):02d}": round(float(np.quantile(shares, q)), 4)
                                           for q in (0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)} if stops else None),
        "stops_per_tenth_of_pairs": {f"{lo / 10:.1f}-{(lo + 1) / 10:.1f}": int(h) for lo, h in enumerate(hist) if h},
        "median_judgements_at_stop": float(np.median([r["stopped_at"] for r in stops])) if stops else None,
        "never_stopped_pairs_ran_out": len(runs) - len(stops),
        "exact_checks_per_run": round(float(np.mean([r["checks"] for r in runs])), 2),
    }


def main() -> None:
    from annotation.stats.pair_selection import annotator_scales, simulate_stop_rule

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small-runs", type=int, default=900)
    ap.add_argument("--large-runs", type=int, default=100)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--expected", type=Path, default=None)
    args = ap.parse_args()
    scales = annotator_scales(11)
    refs = references()
    cpu0 = time.process_time()
    groups: dict[str, list[dict]] = {f"small, {n} candidates": [] for n in SMALL_SIZES}
    groups["large, 98-99 candidates"] = []
    rng = np.random.default_rng(39)
    for run in range(args.small_runs):
        n = SMALL_SIZES[run % len(SMALL_SIZES)]
        theta = None
        while theta is None:
            ref = refs[int(rng.integers(len(refs)))]
            theta = calibrated(ref[rng.choice(len(ref), n, replace=False)], scales)
        groups[f"small, {n} candidates"].append(
            simulate_stop_rule(theta, annotator_scales=scales, seed=run, draws=args.draws, **SMALL))
    print(f"small: {args.small_runs} runs, {time.process_time() - cpu0:.0f} s CPU", flush=True)
    thetas = [calibrated(r, scales) for r in refs]
    for run in range(args.large_runs):
        groups["large, 98-99 candidates"].append(simulate_stop_rule(
            thetas[run % len(thetas)], annotator_scales=scales, seed=run, draws=args.draws, **LARGE))
        if run % 10 == 9:
            print(f"large: {run + 1} runs, {time.process_time() - cpu0:.0f} s CPU", flush=True)
    cpu = time.process_time() - cpu0
    result = {name: summary(runs) for name, runs in groups.items()}
    all_runs = [r for runs in groups.values() for r in runs]
    result["all batches"] = {k: v for k, v in summary(all_runs).items() if k in ("runs", "stopped", "false_stops",
                                                                                 "false_stop_rate")}
    for name, row in result.items():
        print(f"{name}: {row}")
    print(f"CPU {cpu:.0f} s")
    if args.expected:
        import platform

        import yaml

        doc = {"name": "stop_rule", "description": __doc__.split("\n\n")[0],
               "command": f"nice -n 10 perf/stop_rule_bench.py --small-runs {args.small_runs} --large-runs "
                          f"{args.large_runs} --draws {args.draws} --expected {args.expected}",
               "measured": time.strftime("%Y-%m-%d") + f", Python {platform.python_version()}",
               "rules": {"large": LARGE, "small": SMALL}, "exact_draws_per_check": args.draws,
               "cpu_seconds": round(cpu), "groups": result}
        args.expected.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")


if __name__ == "__main__":
    main()
