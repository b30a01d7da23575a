"""Coverage of Bradley–Terry intervals and orientation dependence of agreement, measured.

Run: .venv/bin/python perf/bt_intervals_and_orientation.py [--reps 200]

1. Coverage of nominal 95 % intervals for the centred true strengths: the Laplace posterior
   (annotation.stats.bradley_terry_posterior, prior SD 3) against the percentile bootstrap the
   dashboard used before (annotation.stats.bootstrap_bradley_terry, 100 resamples), same data.
2. Agreement on one simulated campaign whose stronger candidates sit at lower batch positions, with
   the pairs oriented by batch position, by a random verse-id order and at random: the classic
   Fleiss κ moves, Kendall's u and the symmetric κ do not. Observed agreement is printed once.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats import (
    Judgements,
    all_pairs,
    bootstrap_bradley_terry,
    bradley_terry_posterior,
    fleiss_kappa_judgements,
    fleiss_kappa_symmetric,
    from_winner_ids,
    kendall_u,
    simulate_judgements,
)


def coverage(n: int, per_pair: int, sd: float, reps: int, seed: int = 0) -> tuple[float, float, float, float]:
    rng = np.random.default_rng(seed)
    pr = all_pairs(n)
    hit_post = hit_boot = total = 0
    t_post = t_boot = 0.0
    for _ in range(reps):
        theta = rng.normal(0, sd, n)
        wins = rng.binomial(per_pair, expit(theta[pr[:, 0]] - theta[pr[:, 1]]))
        c = np.zeros((n, n))
        c[pr[:, 0], pr[:, 1]] = wins
        c[pr[:, 1], pr[:, 0]] = per_pair - wins
        truth = theta - theta.mean()
        t0 = time.perf_counter()
        post = bradley_terry_posterior(c, n_draws=0)
        t1 = time.perf_counter()
        boot = bootstrap_bradley_terry(c, n_boot=100, seed=int(rng.integers(1 << 30)))
        t2 = time.perf_counter()
        t_post += t1 - t0
        t_boot += t2 - t1
        hit_post += int(((post.lower <= truth) & (truth <= post.upper)).sum())
        hit_boot += int(((boot.lower <= truth) & (truth <= boot.upper)).sum())
        total += n
    return hit_post / total, hit_boot / total, 1000 * t_post / reps, 1000 * t_boot / reps


def orientation() -> None:
    theta = np.linspace(1.2, -1.2, 40)  # lower position = stronger, as batch position correlates with similarity
    j = simulate_judgements(theta, n_annotators=11, annotators_per_pair=3, annotator_noise=1.0, seed=5)
    rng = np.random.default_rng(1)
    rules = {"batch position": np.arange(j.n_items), "verse id (shuffled)": rng.permutation(j.n_items),
             "random per pair": None}
    print("\nagreement on the same judgements under three orientation rules")
    print(f"{'rule':<22}{'classic Fleiss κ':>18}{'symmetric κ':>14}{'Kendall u':>12}{'observed':>10}")
    for name, perm in rules.items():
        if perm is None:  # a coin flip per pair decides which candidate is "a"
            flip = (rng.random(j.n_items * j.n_items) < 0.5)[j.pair_index]
            r = Judgements(j.annotator, j.a, j.b, np.where(flip, 1 - j.winner_is_b, j.winner_is_b), j.n_items,
                           timestamp=j.timestamp)
        else:
            r = from_winner_ids(j.annotator, perm[j.a], perm[j.b], perm[j.winner], j.n_items, timestamp=j.timestamp)
        classic = fleiss_kappa_judgements(r)
        print(f"{name:<22}{classic.value:>18.4f}{fleiss_kappa_symmetric(r).value:>14.4f}{kendall_u(r).value:>12.4f}"
              f"{classic.observed:>10.4f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    print("coverage of nominal 95 % intervals (share of true centred strengths inside)")
    print(f"{'design':<28}{'posterior':>10}{'bootstrap':>11}{'ms post':>9}{'ms boot':>9}{'ratio':>7}")
    for n, per, sd in ((10, 5, 1.0), (20, 2, 1.0), (8, 1, 1.0), (10, 5, 2.5), (30, 1, 1.5)):
        cp, cb, tp, tb = coverage(n, per, sd, args.reps)
        print(f"{f'{n} items × {per}/pair, SD {sd}':<28}{cp:>10.3f}{cb:>11.3f}{tp:>9.2f}{tb:>9.1f}{tb / tp:>7.0f}×")
    orientation()


if __name__ == "__main__":
    main()
