"""Interval coverage of the Bradley–Terry strengths at 99 candidates, across spreads and designs (issues 26, 39): the
exact sampler the analytics job uses for every batch, beside one learnt normal and the approximation on request.

Usage: .venv/bin/python perf/bt_coverage_99.py [--seeds 30] [--first-seed 0] [--draws 1000] [--adaptive-budget 1500]
       [--truths narrow,prior,wide,gold,gold-calibrated,gold-30] [--designs adaptive,exhaustive,random]
       [--fits mixture,one normal,approximation] [--write perf/expected/annotation/bt_coverage_99.yaml]
       .venv/bin/python perf/bt_coverage_99.py --cost [--seeds 5]

For each seed and truth, 11 simulated annotators of equal noise (the model's: P(i beats j) = σ(θ_i − θ_j)) judge one
99-candidate batch under the design (`pair_selection.simulate_design`, the service's rule: sets of 10 with 3 overlap
pairs): ``adaptive`` and ``random`` (uniformly random fresh pairs) for `--adaptive-budget` judgements, ``exhaustive``
until every one of the 4,851 pairs is judged (plus the overlap judgements: every pair, the seed study's design).
Truths: ``narrow`` θ ~ N(0, 1²), ``prior`` N(0, 3²) (the old fixed prior's SD), ``wide`` N(0, 5²), ``gold`` θ = 6 ·
the DBBE STS gold of reference 16977 1 (the demo's scale), ``gold-calibrated`` θ = 19.09 · gold (the scale at which
simulated annotators agree as the gold's did, SD 4.40; a group of candidates far ahead of a bulk) and ``gold-30``
θ = 30 · gold. Fits (`--fits`; the named alternatives in the same run):

* ``mixture`` (always): what the analytics job shows for every batch, `bradley_terry_posterior(exact=True)`: 4 chains
  of Pólya-Gamma Gibbs under the learnt three-component normal-mixture prior (`bt_bayes._gibbs_draws`; centres
  N(0, 5²), spreads Inverse-Gamma(1, 1)), with its convergence check (`bt_bayes.convergence`);
* ``one normal``: the same sampler with one component (θ ~ N(0, s²), s² ~ Inverse-Gamma(1, 4)): the prior of before;
* ``approximation``: `bradley_terry_posterior()` without `exact` (a request's live scores: the Laplace fit at the
  Type-II ML prior SD at this size).

Prints, per truth and design, the share of the 99 true (centred) strengths inside the 95 % intervals (mean over
seeds), the same for the 5 strongest and the 5 weakest true candidates, CPU seconds per fit and per simulated batch,
and how many fits failed the convergence check; with `--write` adds the rows to a YAML file (rows of other runs, e.g.
other seeds or cells, are kept, each run's command listed).
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from adaptive_bench import GOLD_SCALE, gold_theta  # noqa: E402

FITS = ("mixture", "one normal", "approximation")
CALIBRATED_SCALE = 19.09  # calibrate_strength_scale(gold, DBBE_AGREEMENT, annotator_scales(11)), perf/adaptive_bench.py


TRUTHS = ("narrow", "prior", "wide", "gold", "gold-calibrated", "gold-30")


def truth_of(name: str, seed: int, gold: np.ndarray) -> np.ndarray:
    spreads = {"narrow": 1.0, "prior": 3.0, "wide": 5.0}
    if name in spreads:
        return np.random.default_rng(500 + seed).normal(0.0, spreads[name], len(gold))
    return {"gold": GOLD_SCALE, "gold-calibrated": CALIBRATED_SCALE, "gold-30": 30.0}[name] * gold


def fits(counts: np.ndarray, seed: int, draws: int, names: tuple[str, ...] = FITS) -> dict:
    from annotation.stats.bt_bayes import _gibbs_draws, bradley_terry_posterior

    out = {}
    t = time.process_time()
    post = bradley_terry_posterior(counts, n_draws=0, exact=True, gibbs_draws=draws, seed=seed)
    out["mixture"] = (post.lower, post.upper, time.process_time() - t, {**post.convergence, "strengths": post.strengths})
    if "one normal" in names:
        t = time.process_time()
        one = _gibbs_draws(counts, draws, np.random.default_rng(seed), components=1).reshape(-1, len(counts))
        lo, hi = np.quantile(one, [0.025, 0.975], axis=0)
        out["one normal"] = (lo, hi, time.process_time() - t, None)
    if "approximation" in names:
        t = time.process_time()
        approx = bradley_terry_posterior(counts, n_draws=0)
        out["approximation"] = (approx.lower, approx.upper, time.process_time() - t, None)
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


def analytics_cost(seeds: int, budget: float | None, write: Path | None) -> None:
    """The analytics job's statistics on one batch of the seed study's design, DBBE-calibrated: 99 candidates, every
    pair judged by 3 of 11 annotators (14,553 judgements), θ = 19.09 · gold: thread CPU seconds of the exact fit
    (`bradley_terry_posterior(exact=True, n_draws=200)`, what `analytics._one_batch_scores` asks for) plus the ranking
    and claims made from its draws (`favoured_order`, `order_claims`); median and max over seeds, with how the chains
    ended."""
    from annotation.stats import simulate_judgements
    from annotation.stats.bt_bayes import CPU_BUDGET_S, bradley_terry_posterior
    from annotation.stats.rank_claims import favoured_order, order_claims

    _, theta6 = gold_theta(None)
    theta = CALIBRATED_SCALE * theta6 / GOLD_SCALE
    cpu, checks = [], []
    for seed in range(seeds):
        counts = simulate_judgements(theta, None, 11, 3, seed=seed).count_matrix()
        t = time.thread_time()
        post = bradley_terry_posterior(counts, n_draws=200, seed=seed, exact=True, cpu_budget=budget)
        shown = favoured_order(post.strengths, post.draws)
        order_claims(np.where(shown > 0, -shown.astype(float), np.nan), post.draws)
        cpu.append(time.thread_time() - t)
        checks.append(post.convergence)
        print(f"seed {seed}: {cpu[-1]:.1f} CPU s, {post.convergence}", flush=True)
    figures = {"CPU s median": round(float(np.median(cpu)), 1), "CPU s max": round(float(np.max(cpu)), 1),
               "targets met (R-hat ≤ 1.01, bulk and tail ESS ≥ 400)": sum(c["ok"] for c in checks),
               "convergence alarm": sum(c["alarm"] for c in checks),
               "largest R-hat": max(c["max_rhat"] for c in checks),
               "least ESS": round(min(min(c["min_ess_bulk"], c["min_ess_tail"]) for c in checks)),
               "largest Monte Carlo error of an interval end": max(c["max_mcse_ends"] for c in checks),
               "draws median": int(np.median([c["draws"] for c in checks]))}
    print(figures)
    if write:
        import yaml

        write.write_text(yaml.safe_dump({
            "title": "The analytics job's exact fit on the seed study's design, DBBE-calibrated (issue 46)",
            "description": (
                "Thread CPU seconds of one batch's statistics in the analytics job (the exact fit with its convergence "
                "run and the ranking and claims from its draws) on 99 candidates × 4,851 pairs × 3 judgements by 11 "
                "simulated annotators, θ = 19.09 · the DBBE gold of reference 16977 1; the chains run until R-hat ≤ "
                "1.01 and bulk and tail ESS ≥ 400 or the CPU budget. Target: median ≤ 15, max ≤ 30. Machine: the shared "
                "2-core one."),
            "command": " ".join(["perf/bt_coverage_99.py", *sys.argv[1:]]),
            "measured": {"date": datetime.date.today().isoformat(), "load_average": round(os.getloadavg()[0], 1),
                         "cpu_budget_s": CPU_BUDGET_S if budget is None else budget, "seeds": seeds},
            "figures": figures}, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"wrote {write}")


def main() -> None:
    from annotation.stats.pair_selection import simulate_design

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed … first-seed + seeds − 1 (split runs)")
    ap.add_argument("--draws", type=int, default=1000, help="exact draws per fit before the chains run on (the "
                                                             "analytics job's: 1000)")
    ap.add_argument("--candidates", type=int, default=99, help="fewer than 99: the truths' candidates every "
                                                               "(99 / N)-th of the gold's order (DBBE-shaped at N)")
    ap.add_argument("--adaptive-budget", type=int, default=1500, help="judgements of the adaptive and random designs")
    ap.add_argument("--truths", default=",".join(TRUTHS))
    ap.add_argument("--designs", default="adaptive,exhaustive,random")
    ap.add_argument("--fits", default="mixture", help="which fits (mixture always; one normal, approximation)")
    ap.add_argument("--explore", default="uniform",
                    help="adaptive exploration, comma-separated, each a row of the same run: uniform (the service's) "
                         "and/or near (among near posterior ranks once the batch has an order, explore_window)")
    ap.add_argument("--write", type=Path, help="a YAML file of the figures (perf/expected/annotation/bt_coverage_99"
                                               ".yaml); rows already in it from other runs are kept")
    ap.add_argument("--cost", action="store_true", help="only the cost of exact draws for the stop rule and claims")
    ap.add_argument("--analytics-cost", action="store_true", help="only the analytics job's fit on 99 × 4,851 × 3, "
                                                                   "DBBE-calibrated (`--seeds` batches; `--write`)")
    ap.add_argument("--budget", type=float, help="with --analytics-cost: the CPU budget (default the product's)")
    ap.add_argument("--per-component", type=int, help="candidates per prior component (`bt_bayes.MIN_PER_COMPONENT`; "
                                                      "a named alternative: 1000 = one normal at every size)")
    args = ap.parse_args()
    if args.per_component:
        from annotation.stats import bt_bayes

        bt_bayes.MIN_PER_COMPONENT = args.per_component
    if args.analytics_cost:
        analytics_cost(args.seeds, args.budget, args.write)
        return
    if args.cost:
        cost(args.seeds)
        return
    _, theta6 = gold_theta(None)
    gold = theta6 / GOLD_SCALE
    if args.candidates < len(gold):
        gold = np.sort(gold)[np.linspace(0, len(gold) - 1, args.candidates).round().astype(int)]
    n = len(gold)
    figures: dict[str, dict] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    names = tuple(x.strip() for x in args.fits.split(","))
    variants = [(d, e) for d in args.designs.split(",")
                for e in (args.explore.split(",") if d == "adaptive" else ["uniform"])]
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for truth_name in args.truths.split(","):
        for design, explore in variants:
            budget = n * (n - 1) if design == "exhaustive" else args.adaptive_budget
            hits: dict[str, list] = {}
            judged, sim_cpu, checks = [], [], []
            for seed in seeds:
                theta = truth_of(truth_name, seed, gold)
                truth = theta - theta.mean()
                c1 = time.process_time()
                sim = simulate_design(theta, design, annotator_scales=np.ones(11), budget=budget, seed=seed,
                                      return_counts=True, local_explore=explore == "near")
                sim_cpu.append(time.process_time() - c1)
                counts = sim["counts"]
                judged.append(counts.sum())
                order = np.argsort(-truth)
                for name, (lo, hi, secs, check) in fits(counts, seed, args.draws, names).items():
                    ok = (lo <= truth) & (truth <= hi)
                    hits.setdefault(name, []).append((ok.mean(), ok[order[:5]].mean(), ok[order[-5:]].mean(), secs))
                    if name == "mixture":
                        checks.append({**check, "coverage": ok.mean(),
                                       "outside": int(((check["strengths"] < lo) | (check["strengths"] > hi)).sum())})
            label = design if design != "adaptive" or args.explore == "uniform" else f"adaptive, {explore} exploration"
            row = (f"{n} candidates · " if n != 99 else "") + f"{truth_name} / {label} ({np.mean(judged):.0f} judgements)"
            figures[row] = {"seeds": f"{seeds.start}-{seeds.stop - 1}"}
            for name, vals in hits.items():
                v = np.array(vals)
                figures[row][f"{name}: all"] = round(float(v[:, 0].mean()), 3)
                figures[row][f"{name}: strongest 5"] = round(float(v[:, 1].mean()), 3)
                figures[row][f"{name}: weakest 5"] = round(float(v[:, 2].mean()), 3)
                figures[row][f"{name}: CPU s per fit"] = round(float(v[:, 3].mean()), 2)
                if len(v) > 1:  # the spread over seeds: what a one-seed test can expect to see
                    figures[row][f"{name}: SD over seeds"] = round(float(v[:, 0].std(ddof=1)), 3)
                    figures[row][f"{name}: lowest seed"] = round(float(v[:, 0].min()), 3)
            figures[row]["mixture: targets not met (R-hat ≤ 1.01, ESS ≥ 400)"] = sum(not c["ok"] for c in checks)
            figures[row]["mixture: convergence alarm"] = sum(c["alarm"] for c in checks)
            figures[row]["mixture: largest R-hat"] = round(max(c["max_rhat"] for c in checks), 3)
            figures[row]["mixture: strengths outside their own interval"] = sum(c["outside"] for c in checks)
            figures[row]["mixture: largest Monte Carlo error of an interval end"] = round(
                max(c["max_mcse_ends"] for c in checks), 3)
            figures[row]["mixture: per fit (R-hat, least ESS, coverage)"] = [
                [round(float(c["max_rhat"]), 3), round(float(min(c["min_ess_bulk"], c["min_ess_tail"]))),
                 round(float(c["coverage"]), 3)] for c in checks]
            print(f"  per fit (R-hat, least ESS, coverage): {figures[row]['mixture: per fit (R-hat, least ESS, coverage)']}",
                  flush=True)
            figures[row]["simulation CPU s per seed"] = round(float(np.mean(sim_cpu)), 2)
            print(f"  mixture per seed: {' '.join(f'{x[0]:.3f}' for x in hits['mixture'])}", flush=True)
            print(f"{row}: " + "; ".join(f"{name} {np.mean([x[0] for x in vals]):.3f} (strongest 5 "
                                          f"{np.mean([x[1] for x in vals]):.3f}, weakest 5 "
                                          f"{np.mean([x[2] for x in vals]):.3f}, {np.mean([x[3] for x in vals]):.2f} "
                                          "CPU s)" for name, vals in hits.items())
                  + f"; alarm {figures[row]['mixture: convergence alarm']}/{len(checks)}, outside own interval "
                  + f"{figures[row]['mixture: strengths outside their own interval']}"
                  + f"  [{time.perf_counter() - t0:.0f} s so far]", flush=True)
    if args.write:
        import yaml

        old = yaml.safe_load(args.write.read_text(encoding="utf-8")) if args.write.exists() else {}
        runs = old.get("runs", [])
        runs.append({"command": " ".join(["perf/bt_coverage_99.py", *sys.argv[1:]]),
                     "date": datetime.date.today().isoformat(), "load_average": round(os.getloadavg()[0], 1),
                     "wall_s": round(time.perf_counter() - t0), "cpu_s": round(time.process_time() - c0),
                     "rows": list(figures)})
        data = {
            "title": "Bradley–Terry interval coverage at 99 candidates",
            "description": (
                "Share of the true (centred) strengths inside the nominal 95 % intervals, mean over seeds, for one "
                "99-candidate batch judged by 11 simulated annotators of equal noise, overall and for the 5 strongest "
                "and 5 weakest true candidates; `mixture` is what the analytics job shows for every batch (the exact "
                "sampler: 4 chains, learnt three-component normal mixture, centres N(0, 5²), spreads "
                "Inverse-Gamma(1, 1)); target 0.93-0.97 in every cell (issue 39). Written by the commands under "
                "`runs` (see the script's docstring and docs/statistics.md, 'One posterior for every batch')."),
            "runs": runs,
            "figures": {**old.get("figures", {}), **figures},
        }
        args.write.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
