"""Interval coverage of the Bradley–Terry strengths at 99 candidates, across spreads, under adaptive and exhaustive
selection (issue 26): the learnt-mixture prior of the exact sampler against one learnt normal and the approximation.

Usage: .venv/bin/python perf/bt_coverage_99.py [--seeds 20] [--draws 600] [--adaptive-budget 1500]
       [--truths narrow,prior,wide,gold,gold-calibrated] [--write docs/results/bt_coverage.yaml]
       .venv/bin/python perf/bt_coverage_99.py --cost [--seeds 5]

For each seed and truth, 11 simulated annotators of equal noise (the model's: P(i beats j) = σ(θ_i − θ_j)) judge one
99-candidate batch under the design (`pair_selection.simulate_design`, the service's rule: sets of 10 with 3 overlap
pairs): ``adaptive`` for `--adaptive-budget` judgements, ``exhaustive`` until every one of the 4,851 pairs is judged
(plus the overlap judgements). Truths: ``narrow`` θ ~ N(0, 1²), ``prior`` N(0, 3²) (the old fixed prior's SD),
``wide`` N(0, 5²), ``gold`` θ = 6 · the DBBE STS gold of reference 16977 1 (the demo's scale) and
``gold-calibrated`` θ = 19.09 · gold (the scale at which simulated annotators agree as the gold's did, SD 4.40; a
group of candidates far ahead of a bulk). Each batch is fitted three ways, the named alternatives in the same run:

* ``mixture``: what the dashboard uses for adaptive batches, `bradley_terry_posterior(exact=True)`: Pólya-Gamma Gibbs
  under the learnt three-component normal-mixture prior (`bt_bayes._gibbs_draws`; centres N(0, 5²), spreads
  Inverse-Gamma(1, 1));
* ``one normal``: the same sampler with one component (θ ~ N(0, s²), s² ~ Inverse-Gamma(1, 4)): the prior of before;
* ``approximation``: `bradley_terry_posterior()` without `exact` (what non-adaptive batches show: the Laplace fit at
  the Type-II ML prior SD at this size).

Prints, per truth and design, the share of the 99 true (centred) strengths inside the 95 % intervals, the same for the
10 strongest and 10 weakest candidates, and seconds per fit; with `--write` stores the table as a results data file
(`scripts/results_pages.py` turns it into docs/results/bt_coverage.md).
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_bench import GOLD_SCALE, gold_theta  # noqa: E402

FITS = ("mixture", "one normal", "approximation")
CALIBRATED_SCALE = 19.09  # calibrate_strength_scale(gold, DBBE_AGREEMENT, annotator_scales(11)), perf/adaptive_bench.py


def truth_of(name: str, seed: int, gold: np.ndarray) -> np.ndarray:
    spreads = {"narrow": 1.0, "prior": 3.0, "wide": 5.0}
    if name in spreads:
        return np.random.default_rng(500 + seed).normal(0.0, spreads[name], len(gold))
    return {"gold": GOLD_SCALE, "gold-calibrated": CALIBRATED_SCALE}[name] * gold


def fits(counts: np.ndarray, seed: int, draws: int, names: tuple[str, ...] = FITS) -> dict:
    from annotation.stats.bt_bayes import _gibbs_draws, bradley_terry_posterior

    out = {}
    t = time.perf_counter()
    post = bradley_terry_posterior(counts, n_draws=0, exact=True, gibbs_draws=draws, seed=seed)
    out["mixture"] = (post.lower, post.upper, time.perf_counter() - t)
    if "one normal" in names:
        t = time.perf_counter()
        one = _gibbs_draws(counts, draws, np.random.default_rng(seed), components=1).reshape(-1, len(counts))
        lo, hi = np.quantile(one, [0.025, 0.975], axis=0)
        out["one normal"] = (lo, hi, time.perf_counter() - t)
    t = time.perf_counter()
    approx = bradley_terry_posterior(counts, n_draws=0)
    out["approximation"] = (approx.lower, approx.upper, time.perf_counter() - t)
    return out


def cost(seeds: int) -> None:
    """What the stop rule and the rank claims pay for exact draws: per batch shape, the Laplace adjacent
    probabilities of before (`pair_selection.posterior` + `adjacent_order_probabilities`), the stop rule's exact draws
    (`STOP_DRAWS`, `bradley_terry_posterior(exact=True)` + `order_claims`) and a cache hit (the count matrix's digest
    and a dictionary look-up, what `adaptive_batches.exact_adjacent` does on a state it has seen); medians."""
    import hashlib

    from annotation.stats import pair_selection as ps
    from annotation.stats.bt_bayes import bradley_terry_posterior
    from annotation.stats.rank_claims import order_claims

    stop_draws = 600  # annotation.services.adaptive_batches.STOP_DRAWS (a Django module: not imported here)
    shapes = (("30 candidates, 300 adaptive judgements", 30, "adaptive", 300),
              ("99 candidates, 1,500 adaptive judgements", 99, "adaptive", 1500),
              ("99 candidates, every pair (5,709 judgements)", 99, "exhaustive", 99 * 98))
    for label, n, design, budget in shapes:
        lap, exact, hit = [], [], []
        for seed in range(seeds):
            theta = np.random.default_rng(seed).normal(0, 2, n)
            c = ps.simulate_design(theta, design, annotator_scales=np.ones(11), budget=budget, seed=seed,
                                   return_counts=True)["counts"]
            t = time.perf_counter()
            ps.adjacent_order_probabilities(ps.posterior(c))
            lap.append(time.perf_counter() - t)
            t = time.perf_counter()
            post = bradley_terry_posterior(c, n_draws=0, exact=True, gibbs_draws=stop_draws, seed=seed)
            order_claims(post.strengths, post.draws)
            exact.append(time.perf_counter() - t)
            cache = {hashlib.blake2b(c.tobytes(), digest_size=16).digest(): 1}
            t = time.perf_counter()
            for _ in range(100):
                _ = cache.get(hashlib.blake2b(np.ascontiguousarray(c, float).tobytes(), digest_size=16).digest())
            hit.append((time.perf_counter() - t) / 100)
        print(f"{label}: Laplace {np.median(lap) * 1e3:.1f} ms; exact draws + claims {np.median(exact):.2f} s "
              f"({np.median(exact) / np.median(lap):.0f}× the Laplace); cache hit {np.median(hit) * 1e6:.0f} µs",
              flush=True)


def main() -> None:
    from annotation.stats.pair_selection import simulate_design

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--draws", type=int, default=600)
    ap.add_argument("--adaptive-budget", type=int, default=1500)
    ap.add_argument("--truths", default="narrow,prior,wide,gold,gold-calibrated")
    ap.add_argument("--designs", default="adaptive,exhaustive")
    ap.add_argument("--fits", default=",".join(FITS), help="which fits (mixture always; one normal, approximation)")
    ap.add_argument("--explore", default="uniform",
                    help="adaptive exploration, comma-separated, each a row of the same run: uniform (the service's) "
                         "and/or near (among near posterior ranks once the batch has an order, explore_window)")
    ap.add_argument("--write", type=Path)
    ap.add_argument("--cost", action="store_true", help="only the cost of exact draws for the stop rule and claims")
    args = ap.parse_args()
    if args.cost:
        cost(args.seeds)
        return
    _, theta6 = gold_theta(None)
    gold = theta6 / GOLD_SCALE
    n = len(gold)
    figures: dict[str, dict] = {}
    t0 = time.perf_counter()
    names = tuple(x.strip() for x in args.fits.split(","))
    variants = [(d, e) for d in args.designs.split(",")
                for e in (args.explore.split(",") if d == "adaptive" else ["uniform"])]
    for truth_name in args.truths.split(","):
        for design, explore in variants:
            budget = args.adaptive_budget if design == "adaptive" else n * (n - 1)
            hits: dict[str, list] = {}
            judged = []
            for seed in range(args.seeds):
                theta = truth_of(truth_name, seed, gold)
                truth = theta - theta.mean()
                sim = simulate_design(theta, "adaptive" if design == "adaptive" else "exhaustive",
                                      annotator_scales=np.ones(11), budget=budget, seed=seed, return_counts=True,
                                      local_explore=explore == "near")
                counts = sim["counts"]
                judged.append(counts.sum())
                order = np.argsort(-truth)
                ends = np.r_[order[:10], order[-10:]]
                for name, (lo, hi, secs) in fits(counts, seed, args.draws, names).items():
                    ok = (lo <= truth) & (truth <= hi)
                    hits.setdefault(name, []).append((ok.mean(), ok[ends].mean(), secs))
            label = design if design != "adaptive" or args.explore == "uniform" else f"adaptive, {explore} exploration"
            row = f"{truth_name} / {label} ({np.mean(judged):.0f} judgements)"
            figures[row] = {}
            for name, vals in hits.items():
                v = np.array(vals)
                figures[row][f"{name}: all"] = round(float(v[:, 0].mean()), 3)
                figures[row][f"{name}: 10 strongest + 10 weakest"] = round(float(v[:, 1].mean()), 3)
                figures[row][f"{name}: s per fit"] = round(float(v[:, 2].mean()), 3)
                if len(v) > 1:  # the spread over seeds: what a one-seed test can expect to see
                    figures[row][f"{name}: SD over seeds"] = round(float(v[:, 0].std(ddof=1)), 3)
                    figures[row][f"{name}: lowest seed"] = round(float(v[:, 0].min()), 3)
            print(f"  mixture per seed: {' '.join(f'{x[0]:.3f}' for x in hits['mixture'])}", flush=True)
            print(f"{row}: " + "; ".join(f"{name} {np.mean([x[0] for x in vals]):.3f} (ends "
                                          f"{np.mean([x[1] for x in vals]):.3f}, {np.mean([x[2] for x in vals]):.2f} s)"
                                          for name, vals in hits.items())
                  + f"  [{time.perf_counter() - t0:.0f} s so far]", flush=True)
    if args.write:
        import yaml

        data = {
            "title": "Bradley–Terry interval coverage at 99 candidates",
            "description": (
                "Share of the true (centred) strengths inside the nominal 95 % intervals, over seeds, for one "
                "99-candidate batch judged by 11 simulated annotators of equal noise: `mixture` is the exact sampler "
                "the dashboard uses for adaptive batches (learnt three-component normal mixture, centres N(0, 5²), "
                "spreads Inverse-Gamma(1, 1)), `one normal` the same sampler with one learnt normal, `approximation` "
                "the fit non-adaptive batches show; written by the command below (see its docstring and "
                "docs/statistics.md, 'Intervals at 99 candidates' and 'Priors of the mixture')."),
            "command": " ".join(["perf/bt_coverage_99.py", *sys.argv[1:]]),
            "measured": {"date": datetime.date.today().isoformat(), "seeds": args.seeds, "draws": args.draws,
                         "wall_s": round(time.perf_counter() - t0)},
            "figures": figures,
        }
        args.write.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
