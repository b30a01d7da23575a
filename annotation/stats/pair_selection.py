"""Adaptive pair selection for one batch: ask the comparisons that tell most about the ranking.

The current posterior of the Bradley–Terry strengths is the Laplace approximation N(μ, Σ) (`bt_bayes.bt_map`, fixed
prior SD 3 for speed); for a pair (i, j) the difference d = θ_i − θ_j has mean Δ = μ_i − μ_j and variance
v_ij = Σ_ii + Σ_jj − 2Σ_ij, the outcome's probability is p = σ(Δ), and one comparison carries Fisher information
p(1 − p) about d. Criteria (`CRITERIA`, the default `DEFAULT_CRITERION` = "hybrid"):

* ``eig``: the expected information gain of ASAP (Mikhailiuk, Wilmot, Perez-Ortiz, Yue & Mantiuk 2020, "Active
  sampling for pairwise comparisons via approximate message passing and information gain maximization", ICPR) in
  its cheap Gaussian form ``½ log(1 + p(1 − p) v_ij)``: high for pairs both uncertain and close;
* ``misorder``: the expected fall of the posterior probability that i and j are in the wrong order,
  Φ(−|Δ|/√v) before against its expectation over the outcome after one Newton update (`misorder_reduction_pairs`):
  aimed at the ranking, it spends nothing on orders already settled however uncertain the strengths;
* ``hybrid``: misorder + 0.03 · eig. The misorder criterion leads early but stalls once every order looks settled
  (perf/adaptive_bench.py: ρ 0.989–0.990 from 1,750 judgements on), where the small information-gain term keeps
  sharpening the near-ties.

A set takes its pairs greedily by the criterion as a matching (no candidate twice in one set; ASAP's batch mode uses
a spanning tree for the same reason: spread the questions), plus a share of random pairs for exploration (so that a
misfit posterior cannot starve a region of the graph), drawn uniformly (a draw among candidates a few posterior ranks
apart, `explore_window`, is kept but off: `LOCAL_EXPLORE`). The fit is cached between sets and refitted when
`needs_refit` says so (the service `annotation/services/adaptive_batches.py` and the simulation here follow the same
rule). Pure numpy; the scheduler and the design simulation (`simulate_design`) both call `choose_pairs`. The
simulation's ``oracle`` design (`oracle_gain_pairs`) chooses with the true strengths, never the service's rule. It is
not an upper bound on what a selection from the data reaches: its choices depend on θ and on the outcomes so far,
so θ leaks into the count matrix that the estimator reads as if the design were ignorable (with annotators who flip
coins it still ranks well above chance; `rejudge` and perf/adaptive_bench.py's leak check measure this).

Noise calibration (`calibrate_strength_scale`): strengths θ = c · shape with c chosen so that two simulated annotators
agree on a random pair as often as real ones did: the DBBE STS gold's published agreement (`DBBE_AGREEMENT`) or a
project's own.

`adjacent_order_probabilities` gives, for the ranking by posterior mean, the probability that each candidate is
really stronger than the next one, Φ((μ_r − μ_{r+1}) / √v), from the same posterior. The stop rule's gate
(`laplace_top_k`) and its simulation (`simulate_stop_rule`, the service's rule on simulated batches) are at the end.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr
from scipy.stats import norm, spearmanr

from .bt_bayes import bt_map

__all__ = ["Posterior", "posterior", "expected_information_gain", "expected_misorder_reduction", "choose_pairs",
           "adjacent_order_probabilities", "adjacent_rank_claims", "simulate_design", "compare_designs", "DESIGNS",
           "ORACLE_RULES", "oracle_gain_pairs", "midranks", "rejudge",
           "CRITERIA", "explore_window", "annotator_scales", "expected_agreement", "calibrate_strength_scale", "DBBE_AGREEMENT",
           "laplace_top_k", "simulate_stop_rule", "holds_from", "top_recall"]

SELECTION_PRIOR_SD = 3.0
REFIT_EVERY = 10  # judgements between two fits of the selection posterior (the service caches the fit per batch)


def needs_refit(judged: int, fitted_at: int | None) -> bool:
    """Whether a cached selection posterior fitted after `fitted_at` judgements is too old at `judged`: once
    `REFIT_EVERY` judgements arrived, or earlier while the batch is young (a fifth of the judgements behind the fit),
    so the first sets already follow the first answers."""
    if fitted_at is None or judged < fitted_at:
        return True
    return judged - fitted_at >= min(REFIT_EVERY, 1 + fitted_at // 5)

# Noise calibration. Swaelens et al. report Fleiss' κ 0.6584 over the 1,448 pairs of the DBBE STS gold that two
# annotators judged (11 annotators, partial overlap). Its chance term is close to ½ for a two-way choice with sides
# randomised, so the observed agreement of two annotators on a random pair is (1 + κ)/2 ≈ 0.829.
DBBE_FLEISS_KAPPA = 0.6584
DBBE_AGREEMENT = (1.0 + DBBE_FLEISS_KAPPA) / 2.0


def annotator_scales(n_annotators: int, noise: float = 1.0) -> np.ndarray:
    """Noise scales of a simulated panel, careful to sloppy: noise · (0.5 … 1.5), as the demo's simulation."""
    if n_annotators <= 1:
        return np.full(max(n_annotators, 0), float(noise))
    return noise * (0.5 + np.arange(n_annotators) / (n_annotators - 1))


def expected_agreement(theta: np.ndarray, scales: np.ndarray) -> float:
    """Probability that two different annotators of the panel choose the same candidate of a uniformly random pair:
    the mean over pairs and annotator pairs of p_k p_l + (1 − p_k)(1 − p_l), p_k = σ((θ_i − θ_j)/s_k)."""
    theta, scales = np.asarray(theta, float), np.asarray(scales, float)
    iu, ju = np.triu_indices(len(theta), 1)
    p = expit((theta[iu] - theta[ju])[None, :] / scales[:, None])  # annotators × pairs
    m = len(scales)
    if m < 2:
        return float((p * p + (1 - p) * (1 - p)).mean())
    tot, q = p.sum(0), (1 - p).sum(0)  # Σ_k≠l p_k p_l = (Σ p)² − Σ p²
    same = (tot ** 2 - (p ** 2).sum(0)) + (q ** 2 - ((1 - p) ** 2).sum(0))
    return float((same / (m * (m - 1))).mean())


def calibrate_strength_scale(shape: np.ndarray, agreement: float, scales: np.ndarray) -> float:
    """The c for which strengths θ = c · shape make the simulated panel agree on a random pair as often as real
    annotators did (`agreement`, e.g. `DBBE_AGREEMENT`, or a project's observed agreement on doubly judged pairs).
    Raises ValueError when no c does (agreement ≤ ½, or above what these strengths allow)."""
    from scipy.optimize import brentq

    shape = np.asarray(shape, float)
    if not 0.5 < agreement < 1.0:
        raise ValueError(f"agreement must be between 0.5 and 1 to calibrate noise, not {agreement:.3f}")
    if np.ptp(shape) <= 0:
        raise ValueError("the strengths are all equal: no scale makes annotators agree")
    lo, hi = 1e-3, 1e3
    if expected_agreement(hi * shape, scales) < agreement:
        raise ValueError(f"agreement {agreement:.3f} is beyond what these strengths allow")
    return float(brentq(lambda c: expected_agreement(c * shape, scales) - agreement, lo, hi, xtol=1e-4))


@dataclass(frozen=True)
class Posterior:
    mean: np.ndarray  # (n,) posterior mode (Laplace)
    cov: np.ndarray  # (n × n)


# A refit of the selection posterior starts from the previous mode, a few judgements away: Newton's first step from
# there is already within ~1e-3 of the mode (quadratic convergence), and the further steps to 1e-5 cost 0.9 of the
# fit's 1.6 ms (100 candidates). The figures (ρ at checkpoints) use fits to 1e-5 from zero.
REFIT_TOL = 1e-3


def posterior(counts: np.ndarray, init: np.ndarray | None = None, tol: float = 1e-5) -> Posterior:
    """Laplace posterior of the strengths from a win-count matrix (counts[i, j] = times i beat j); `init` a warm
    start, `tol` bt_map's stopping rule (`REFIT_TOL` for the selection's warm-started refits)."""
    theta, h = bt_map(np.asarray(counts, float), SELECTION_PRIOR_SD, init=init, tol=tol, max_iter=30)
    return Posterior(theta, np.linalg.inv(h))


def refit(counts: np.ndarray, previous: Posterior | None) -> Posterior:
    """The selection posterior after new judgements, warm-started from `previous` (2–3 Newton steps to bt_map's
    1e-5). The service and the design simulation both refit through here. One Newton step only (an online Laplace
    update, 0.9 ms less per refit at 100 candidates) was tried: the exact intervals' coverage under adaptive
    selection at a true SD of 4 fell from 0.947 to 0.930 (40 replications, tests/annotation/stats/test_bt_coverage.py's
    setting), so refits converge."""
    return posterior(counts, init=None if previous is None else previous.mean)


def _difference(post: Posterior, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and variance of θ_i − θ_j for index arrays i, j."""
    cov = post.cov
    return post.mean[i] - post.mean[j], np.clip(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 1e-12, None)


def information_gain_pairs(post: Posterior, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Approximate EIG of one more comparison of each pair (i[k], j[k]) (module docstring)."""
    delta, v = _difference(post, i, j)
    return _information_gain(expit(delta), v)


def _information_gain(p: np.ndarray, v: np.ndarray) -> np.ndarray:
    return 0.5 * np.log1p(p * (1.0 - p) * v)


def misorder_reduction_pairs(post: Posterior, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Expected fall of the posterior probability that i and j are ordered wrongly, from one more comparison of the
    two. Before: Φ(−|Δ|/√v), Δ = μ_i − μ_j. One outcome y ∈ {0, 1} moves the Gaussian by one Newton step:
    v' = v / (1 + I v), Δ' = Δ + v' (y − p), I = p(1 − p), p = σ(Δ); after, in expectation over y:
    p Φ(−|Δ'_1|/√v') + (1 − p) Φ(−|Δ'_0|/√v'). Unlike the information gain, it spends nothing on pairs whose order is
    already settled however uncertain their strengths, and it favours the close, uncertain pairs that decide ranks."""
    delta, v = _difference(post, i, j)
    return _misorder_reduction(delta, v, expit(delta))


def _misorder_reduction(delta: np.ndarray, v: np.ndarray, p: np.ndarray) -> np.ndarray:
    v_new = v / (1.0 + p * (1.0 - p) * v)
    s_new = np.sqrt(v_new)
    before = ndtr(-np.abs(delta) / np.sqrt(v))
    after = (p * ndtr(-np.abs(delta + v_new * (1.0 - p)) / s_new)
             + (1.0 - p) * ndtr(-np.abs(delta - v_new * p) / s_new))
    return np.clip(before - after, 0.0, None)  # the one-step update can move a settled order's tail slightly up


HYBRID_EIG_WEIGHT = 0.03  # 0.1 and 0.03 measured (6 seeds): 0.03 keeps the misorder criterion's early lead


def hybrid_gain_pairs(post: Posterior, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The misorder reduction plus a small share of the information gain: open orders first, and once they all look settled
    in the posterior (where the misorder criterion alone stalls, trusting a posterior that may be wrong about
    near-ties) still the comparisons that sharpen the strengths most."""
    delta, v = _difference(post, i, j)  # once for both terms
    p = expit(delta)
    return _misorder_reduction(delta, v, p) + HYBRID_EIG_WEIGHT * _information_gain(p, v)


CRITERIA = {"eig": information_gain_pairs, "misorder": misorder_reduction_pairs, "hybrid": hybrid_gain_pairs}
DEFAULT_CRITERION = "hybrid"


def _matrix(post: Posterior, criterion: str) -> np.ndarray:
    n = len(post.mean)
    i, j = np.indices((n, n))
    gain = CRITERIA[criterion](post, i.ravel(), j.ravel()).reshape(n, n)
    np.fill_diagonal(gain, 0.0)
    return gain


def expected_information_gain(post: Posterior) -> np.ndarray:
    """(n × n) approximate EIG of one more comparison of i and j (module docstring); diagonal 0."""
    return _matrix(post, "eig")


def expected_misorder_reduction(post: Posterior) -> np.ndarray:
    """(n × n) `misorder_reduction_pairs` of every pair; diagonal 0."""
    return _matrix(post, "misorder")


# Exploration once the batch has an order: random pairs among candidates at most this many ranks apart. A pair
# of far-apart candidates is settled in any posterior that ranks them roughly right, so a uniformly random pair of
# 99 candidates (ranks ~33 apart on average) told almost nothing: perf/adaptive_bench.py measured ρ +0.002–0.003 at
# 800–1,200 judgements for the local draw against the uniform one (share 0.2, 20 seeds, docs/statistics.md).
EXPLORE_RANK_WINDOW = 4
# Off in the service and the simulation: with a narrow true spread (θ ~ N(0, 1), 99 candidates, 1,500 judgements) the
# near-rank draw left the far-apart orders to the posterior's overall scale, which the exact draws then stretched:
# interval coverage 0.922 over 30 seeds (lowest seeds 0.606, 0.808, 0.808) against 0.941 (lowest 0.889) with uniform
# exploration in the same run (perf/bt_coverage_99.py --explore near,uniform; docs/statistics.md), for a ρ gain of
# 0.0005–0.0023 at 500–1,450 judgements. `explore_window()` stays for `local_explore=True` / `LOCAL_EXPLORE`.
LOCAL_EXPLORE = False
YOUNG_JUDGEMENTS_PER_CANDIDATE = 2  # below this many judgements per candidate the posterior's order means little


def explore_window(judged: int, n_items: int) -> int | None:
    """The rank window for the exploration picks of a batch with `judged` live judgements over `n_items` candidates:
    None (uniform over all never-served pairs) while the batch is young, then `EXPLORE_RANK_WINDOW`."""
    return None if judged < YOUNG_JUDGEMENTS_PER_CANDIDATE * n_items else EXPLORE_RANK_WINDOW


def _explore(post: Posterior, available_i: np.ndarray, available_j: np.ndarray, chosen: list[int], want: int,
             window: int | None, rng: np.random.Generator) -> list[int]:
    """`want` exploration picks among the available pairs not in `chosen`: uniformly among those whose candidates are
    at most `window` ranks apart in the posterior (all of them when `window` is None), the rest uniformly at large
    when the window holds too few."""
    n_av = len(available_i)
    taken = set(chosen)
    picks: list[int] = []
    if window is not None:
        rank = np.empty(len(post.mean), np.int64)
        rank[np.argsort(-post.mean, kind="stable")] = np.arange(len(post.mean))
        near = np.flatnonzero(np.abs(rank[available_i] - rank[available_j]) <= window)
        near = near[~np.isin(near, chosen)] if chosen else near
        if len(near):
            picks = [int(x) for x in rng.choice(near, size=min(want, len(near)), replace=False)]
            taken.update(picks)
    want -= len(picks)
    if want <= 0 or n_av <= len(taken):
        return picks
    if n_av - len(taken) > 4 * want:  # rejection: the pool is large, the set small
        while want:
            x = int(rng.integers(n_av))
            if x not in taken:
                taken.add(x)
                picks.append(x)
                want -= 1
        return picks
    rest = np.setdiff1d(np.arange(n_av), list(taken))
    return picks + [int(x) for x in rng.choice(rest, size=min(want, len(rest)), replace=False)]


def choose_pairs(post: Posterior, available_i: np.ndarray, available_j: np.ndarray, k: int, *,
                 explore_share: float, rng: np.random.Generator, criterion: str = DEFAULT_CRITERION,
                 gain: np.ndarray | None = None, explore_window: int | None = None) -> list[int]:
    """Indices into the available pairs (item arrays `available_i`, `available_j`) for a set of k new pairs:
    round(k · explore_share) at random (uniformly, or with `explore_window` among pairs at most that many posterior
    ranks apart: `explore_window()` says which), the rest greedily by `criterion` (`CRITERIA`; `gain`: its values for
    the available pairs, already computed) with no candidate twice in the set (relaxed when the matching runs out).
    Returns at most k distinct indices, exploration picks last."""
    n_av = len(available_i)
    if k <= 0 or n_av == 0:
        return []
    k = min(k, n_av)
    n_explore = min(int(round(k * explore_share)), k)
    if gain is None:
        gain = CRITERIA[criterion](post, available_i, available_j)
    n_greedy = k - n_explore
    chosen: list[int] = []
    if n_greedy:
        # The matching needs only the head of the order: sort a generous top slice, the whole only if it runs out.
        head = min(n_av, 8 * n_greedy + 64)
        top = np.argpartition(-gain, head - 1)[:head] if head < n_av else np.arange(n_av)
        order = top[np.argsort(-gain[top], kind="stable")]

        def attempts():  # the whole sort only when the head runs out (built eagerly it cost a third of the call)
            yield order
            if head < n_av:
                yield np.argsort(-gain, kind="stable")

        for attempt in attempts():
            chosen, used = [], set()
            for idx in attempt.tolist():
                i, j = int(available_i[idx]), int(available_j[idx])
                if i in used or j in used:
                    continue
                chosen.append(idx)
                used.update((i, j))
                if len(chosen) >= n_greedy:
                    break
            if len(chosen) >= n_greedy or len(attempt) == n_av:
                break
        if len(chosen) < n_greedy:  # not enough disjoint pairs: fill by gain
            taken = set(chosen)
            chosen += [x for x in np.argsort(-gain, kind="stable").tolist() if x not in taken][: n_greedy - len(chosen)]
    if n_explore and n_av > len(chosen):
        chosen += _explore(post, available_i, available_j, chosen, min(n_explore, n_av - len(chosen)),
                           explore_window, rng)
    return chosen


def adjacent_order_probabilities(post: Posterior) -> tuple[np.ndarray, np.ndarray]:
    """(order, probs): items by posterior mean, strongest first, and for each adjacent pair (r, r+1) the
    posterior probability that the r-th is stronger than the (r+1)-th (length n − 1)."""
    order = np.argsort(-post.mean, kind="stable")
    a, b = order[:-1], order[1:]
    d = np.diag(post.cov)
    v = np.clip(d[a] + d[b] - 2.0 * post.cov[a, b], 1e-12, None)
    return order, norm.cdf((post.mean[a] - post.mean[b]) / np.sqrt(v))


def adjacent_rank_claims(counts: np.ndarray, strengths: np.ndarray, prior_sd: float, level: float = 0.95) -> dict:
    """For the ranking by `strengths` (NaN = never compared, left out): per candidate, the posterior probability
    that it is stronger than the next-ranked one (Laplace posterior at `prior_sd`), and whether the family-wise
    claim "every adjacent order holds" can be made for it: each adjacent probability ≥ 1 − (1 − level)/(k − 1)
    (Bonferroni over the k − 1 adjacent pairs, so all such claims hold together with probability ≥ level).

    Returns:
        {"p_next": (n,) NaN for the last and never-compared, "claim": (n,) bool, "threshold": float,
        "n_claims": int, "n_adjacent": int}."""
    n = len(strengths)
    p_next = np.full(n, np.nan)
    claim = np.zeros(n, bool)
    idx = np.flatnonzero(np.isfinite(strengths))
    k = len(idx)
    threshold = 1.0 - (1.0 - level) / max(k - 1, 1)
    if k >= 2:
        theta, h = bt_map(np.asarray(counts, float)[np.ix_(idx, idx)], prior_sd)
        cov = np.linalg.inv(h)
        order = np.argsort(-strengths[idx], kind="stable")
        a, b = order[:-1], order[1:]
        d = np.diag(cov)
        v = np.clip(d[a] + d[b] - 2.0 * cov[a, b], 1e-12, None)
        probs = norm.cdf((theta[a] - theta[b]) / np.sqrt(v))
        p_next[idx[a]] = probs
        claim[idx[a]] = probs >= threshold
    return {"p_next": p_next, "claim": claim, "threshold": float(threshold), "n_claims": int(claim.sum()),
            "n_adjacent": max(k - 1, 0)}


# ---------------------------------------------------------------------------------------------------------
# Design simulation: the same simulated annotators under the exhaustive, random and adaptive designs.

DESIGNS = ("exhaustive", "random", "adaptive")

# The oracle design (simulation only, never the service): pairs chosen knowing the true strengths
# (perf/adaptive_bench.py --oracle). Not an upper bound on data-driven selection: see the module docstring and
# `rejudge`.
ORACLE_RULES = ("gain", "wrong")


def midranks(theta: np.ndarray) -> np.ndarray:
    """Average ranks of `theta` (1 = smallest; tied values share their mean rank), as Spearman's ρ ranks the truth."""
    from scipy.stats import rankdata

    return rankdata(np.asarray(theta, float))


def oracle_gain_pairs(post: Posterior, theta: np.ndarray, scale: float, i: np.ndarray, j: np.ndarray, rule: str,
                      ranks: np.ndarray | None = None) -> np.ndarray:
    """What one more comparison of each pair (i[k], j[k]) by an annotator of noise `scale` is worth to Spearman's ρ,
    judged with the TRUE strengths `theta` (the oracle design; `ranks`: `midranks(theta)`, computed once).

    Every pair is weighted by w = |midrank_i − midrank_j| of the truth: exchanging two neighbours of the estimate
    changes Σ rank_est · midrank_true, the numerator of ρ, by exactly that, and it is 0 for candidates tied in the
    truth (their order cannot change ρ). With Δ, v the posterior mean and variance of θ_i − θ_j and s = sign of the
    true difference, the posterior probability of the wrong order is P = Φ(−s Δ / √v). Rules (`ORACLE_RULES`):

    * ``wrong``: w · P, the pairs whose true order the posterior most likely gets wrong, weighted by their effect on ρ;
    * ``gain``: w · (P − E[P']), the expected fall of that probability after one comparison (the Newton update of
      `misorder_reduction_pairs`), the expectation over the outcome taken with the annotator's TRUE choice
      probability σ((θ_i − θ_j) / scale) rather than the posterior's: a pair the posterior has wrong gains when the
      annotator is likely to say so."""
    if rule not in ORACLE_RULES:
        raise ValueError(f"unknown oracle rule {rule!r}: one of {', '.join(ORACLE_RULES)}")
    theta = np.asarray(theta, float)
    ranks = midranks(theta) if ranks is None else ranks
    delta, v = _difference(post, i, j)
    true = theta[i] - theta[j]
    sign = np.sign(true)
    weight = np.abs(ranks[i] - ranks[j])
    wrong = ndtr(-sign * delta / np.sqrt(v))
    if rule == "wrong":
        return weight * wrong
    p = expit(delta)  # the estimator's model of the outcome, which its update uses
    q = expit(true / scale)  # the annotator's real chance of choosing i
    v_new = v / (1.0 + p * (1.0 - p) * v)
    s_new = np.sqrt(v_new)
    after = (q * ndtr(-sign * (delta + v_new * (1.0 - p)) / s_new)
             + (1.0 - q) * ndtr(-sign * (delta - v_new * p) / s_new))
    return weight * (wrong - after)


TOP_K = 10


def top_recall(estimate: np.ndarray, theta: np.ndarray, k: int = TOP_K) -> float:
    """Top-k recall of a ranking: the share of the k largest `estimate`s that are among the k strongest in `theta`
    (a candidate tied with the true k-th counts as one of them; `rank_claims.top_k_right` without a margin)."""
    from .rank_claims import top_k_right

    top = np.argsort(-np.asarray(estimate, float), kind="stable")[:k]
    return float(top_k_right(theta, top, 0.0)[0]) / k


def simulate_design(theta: np.ndarray, design: str, *, annotator_scales: np.ndarray, budget: int, seed: int,
                    set_size: int = 10, overlap_per_set: int = 3, explore_share: float = 0.2,
                    checkpoints: list[int] | None = None, return_counts: bool = False, criterion: str = DEFAULT_CRITERION,
                    local_explore: bool = LOCAL_EXPLORE, oracle_rule: str = "gain", trace: list | None = None,
                    stop=None) -> dict:
    """Serve sets of `set_size` to annotators in turn until `budget` judgements, under `design`:

    - ``exhaustive``: fresh pairs in a random permutation of all C(n, 2) (the Swaelens et al. design: every pair);
    - ``random``: the same, i.e. uniformly random fresh pairs (identical to exhaustive until all pairs are used,
      kept separate so that the figures name both);
    - ``adaptive``: fresh pairs by `choose_pairs` under `criterion` from the posterior, refitted when `needs_refit`
      says so, as the service does; the exploration share drawn among near ranks once the batch is no longer young
      (`explore_window`) with `local_explore=True`; uniformly by default (`LOCAL_EXPLORE`, as the service);
    - ``oracle`` (not a product design, and not a bound: θ leaks through it, `rejudge`): fresh pairs chosen
      knowing θ and the arriving annotator's noise, by `oracle_gain_pairs` under `oracle_rule`, from the same
      posterior refitted before every set, with the same matching and no exploration.

    In every design `overlap_per_set` of each set's pairs are second judgements by another annotator of pairs judged
    before (the agreement design), and no annotator sees a pair twice. Annotator k chooses i over j with
    probability σ((θ_i − θ_j) / s_k). Returns ``{"judgements": [...], "spearman": [...]}`` at the checkpoints
    (Spearman of the Laplace posterior mode with θ), and with `return_counts` the final count matrix and, per
    judgement, (annotator, i, j, i_won); ``"top_recall"`` at the checkpoints is `top_recall` of the mode (top 10).
    `trace` (adaptive and oracle designs), a list to which every pair chosen by
    the criterion (not the exploration share) is appended as (judgements so far, i, j, posterior mode θ_i − θ_j).
    `stop`, a function of (count matrix, judgements so far) asked after every set: a true answer ends the run there
    (``out["stopped_at"]``, None when the run ended otherwise; `simulate_stop_rule`)."""
    rng = np.random.default_rng(seed)
    n = len(theta)
    iu, ju = np.triu_indices(n, 1)
    n_pairs = len(iu)
    m = len(annotator_scales)
    counts = np.zeros((n, n))
    fresh_mask = np.ones(n_pairs, bool)  # never judged
    perm = rng.permutation(n_pairs)
    perm_pos = 0
    waiting: list[tuple[int, int]] = []  # (pair index, first annotator) awaiting a second judgement
    seen = [set() for _ in range(m)]
    log: list[tuple[int, int, int, int]] = []
    checkpoints = sorted(checkpoints or [budget])
    out = {"judgements": [], "spearman": [], "top_recall": [], "stopped_at": None}
    top_k = min(TOP_K, n - 1)
    cp = 0
    post = gain = fitted_at = None
    annotator = 0
    done = 0
    if design not in (*DESIGNS, "oracle"):
        raise ValueError(f"unknown design {design!r}: one of {', '.join(DESIGNS)}, oracle")
    true_ranks = midranks(theta) if design == "oracle" else None

    def judge(k: int, p: int) -> None:
        i, j = int(iu[p]), int(ju[p])
        i_won = rng.random() < expit((theta[i] - theta[j]) / annotator_scales[k])
        counts[(i, j) if i_won else (j, i)] += 1
        seen[k].add(p)
        log.append((k, i, j, int(i_won)))

    while done < budget:
        k = annotator
        annotator = (annotator + 1) % m
        size = min(set_size, budget - done)
        second = [w for w in waiting if w[1] != k and w[0] not in seen[k]][:overlap_per_set]
        for w in second:
            waiting.remove(w)
        n_fresh = size - len(second)
        if design == "oracle" and done > 0:
            post = refit(counts, post)
            avail = np.flatnonzero(fresh_mask)
            gain = oracle_gain_pairs(post, theta, float(annotator_scales[k]), iu[avail], ju[avail], oracle_rule,
                                     true_ranks)
            picks = [int(avail[x]) for x in choose_pairs(post, iu[avail], ju[avail], n_fresh, explore_share=0.0,
                                                         rng=rng, gain=gain)]
        elif design == "adaptive" and done > 0:
            if post is None or needs_refit(done, fitted_at):  # as the service: a cached fit, refreshed
                post = refit(counts, post)
                gain = CRITERIA[criterion](post, iu, ju)
                fitted_at = done
            avail = np.flatnonzero(fresh_mask)
            picks = [int(avail[x]) for x in choose_pairs(
                post, iu[avail], ju[avail], n_fresh, explore_share=explore_share, rng=rng, gain=gain[avail],
                explore_window=explore_window(done, n) if local_explore else None)]
        else:
            picks = []
            while len(picks) < n_fresh and perm_pos < n_pairs:
                p = int(perm[perm_pos])
                perm_pos += 1
                if fresh_mask[p]:
                    picks.append(p)
        if not picks and not second:
            break
        if trace is not None and design in ("adaptive", "oracle") and done > 0:
            n_chosen_by_gain = n_fresh - (0 if design == "oracle" else min(int(round(n_fresh * explore_share)), n_fresh))
            trace.extend((done, int(iu[p]), int(ju[p]), float(post.mean[iu[p]] - post.mean[ju[p]]))
                         for p in picks[:n_chosen_by_gain])
        promote = max(overlap_per_set - len(second), 0)
        for p in picks:
            fresh_mask[p] = False
        for idx, p in enumerate(picks):
            judge(k, p)
            if idx < promote:
                waiting.append((p, k))
        for p, _ in second:
            judge(k, p)
        done += len(picks) + len(second)
        while cp < len(checkpoints) and done >= checkpoints[cp]:
            fit = posterior(counts)
            out["judgements"].append(done)
            out["spearman"].append(float(spearmanr(fit.mean, theta).statistic))
            out["top_recall"].append(top_recall(fit.mean, theta, top_k))
            cp += 1
        if stop is not None and stop(counts, done):
            out["stopped_at"] = done
            break
    if cp < len(checkpoints) and stop is None:  # ran out of pairs before the last checkpoint
        fit = posterior(counts)
        out["judgements"].append(done)
        out["spearman"].append(float(spearmanr(fit.mean, theta).statistic))
        out["top_recall"].append(top_recall(fit.mean, theta, top_k))
    if return_counts:
        out["counts"] = counts
        out["log"] = log
    return out


def rejudge(log: list[tuple[int, int, int, int]], theta: np.ndarray, annotator_scales: np.ndarray, seed: int,
            upto: int | None = None) -> np.ndarray:
    """The count matrix of the same comparisons (the `log` of `simulate_design(..., return_counts=True)`: annotator,
    i, j, outcome) judged again by the same simulated annotators with fresh, independent outcomes (generator `seed`),
    the first `upto` of them.

    Why: a selection that depends only on earlier outcomes is ignorable for the likelihood, so estimating from its own
    counts is fair. A selection that also depends on θ (the oracle) is not: it can ask, say, about the neighbours of a
    candidate until the answers agree with the truth, and the counts then carry θ without the judgements holding
    that information. Judged afresh, the same pairs carry only what comparisons of them tell; with annotators who
    flip coins every design's re-judged ρ is about 0."""
    theta = np.asarray(theta, float)
    n = len(theta)
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, n))
    for k, i, j, _ in log[:upto]:
        if rng.random() < expit((theta[i] - theta[j]) / annotator_scales[k]):
            counts[i, j] += 1
        else:
            counts[j, i] += 1
    return counts


def holds_from(budgets, values, target: float):
    """The first budget from which `values` (a mean curve over `budgets`) stay at or above `target` at every later
    budget, None when they do not end there: a budget at a tolerance, not the first that touches it (a noisy mean
    curve can touch a level and fall back)."""
    at = None
    for budget, value in zip(budgets, values):
        at = (budget if at is None else at) if value >= target else None
    return at


def compare_designs(theta: np.ndarray, *, annotator_scales: np.ndarray, seeds: int, target: float,
                    shares=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75), explore_share: float = 0.2, progress=None) -> dict:
    """The exhaustive, random and adaptive designs on the same simulated annotators and seeds.

    Budgets are `shares` of the exhaustive design's judgements (every pair once plus the overlap judgements of sets
    of 10 with 3). Returns {"exhaustive": {"judgements", "rho", "sd"}, "random"/"adaptive": [{"judgements", "rho",
    "sd", "min", "max"}] per budget, "needed": {design: the budget from which the mean ρ stays at or above `target`
    (`holds_from`; never the first budget that touches it)
    (None: not within the budgets)}, "target", "seeds"}."""
    n = len(theta)
    full = n * (n - 1)  # more than the exhaustive design uses: it stops once every pair is judged
    ex = [simulate_design(theta, "random", annotator_scales=annotator_scales, budget=full, seed=s, checkpoints=[full])
          for s in range(seeds)]
    ex_j = int(np.mean([e["judgements"][-1] for e in ex]))
    ex_rho = np.array([e["spearman"][-1] for e in ex])
    budgets = sorted({max(10, int(round(share * ex_j))) for share in shares})
    out = {"exhaustive": {"judgements": ex_j, "rho": float(ex_rho.mean()), "sd": float(ex_rho.std())},
           "target": target, "seeds": seeds, "needed": {}}
    for d_index, design in enumerate(("random", "adaptive")):
        runs = []
        for s in range(seeds):
            runs.append(simulate_design(theta, design, annotator_scales=annotator_scales, budget=budgets[-1], seed=s,
                                        checkpoints=budgets, explore_share=explore_share)["spearman"])
            if progress:
                progress((d_index * seeds + s + 1) / (2 * seeds), f"{design}: seed {s + 1} of {seeds}")
        rho = np.array(runs)
        out[design] = [{"judgements": b, "rho": float(rho[:, k].mean()), "sd": float(rho[:, k].std()),
                        "min": float(rho[:, k].min()), "max": float(rho[:, k].max())} for k, b in enumerate(budgets)]
        out["needed"][design] = holds_from([r["judgements"] for r in out[design]], [r["rho"] for r in out[design]],
                                           target)
    out["needed"]["exhaustive"] = ex_j if out["exhaustive"]["rho"] >= target else None
    return out


# ---------------------------------------------------------------------------------------------------------
# The stop rule in simulation: the service's rule (`annotation/services/adaptive_batches.py`) on simulated batches.

STOP_GATE = 0.1  # the exact check is made once the Laplace probability is within this of the level
GATE_DRAWS = 400
STOP_RECHECK = 50


def recheck_spacing(n_candidates: int) -> int:
    """Judgements after a "not settled" exact check before the next one: `STOP_RECHECK`, or a twentieth of the
    batch's pairs when that is fewer (a 12-candidate batch has 66 pairs: a check every 3 judgements, not every 50,
    which the batch might never get before its pairs run out)."""
    return max(1, min(STOP_RECHECK, n_candidates * (n_candidates - 1) // 2 // 20))


def laplace_top_k(post: Posterior, compared: np.ndarray, *, k: int, recall: float, margin: float,
                  seed: int = 0) -> dict:
    """`rank_claims.top_k_settled` on `GATE_DRAWS` normal draws of the Laplace posterior `post` (the stop rule's
    gate: milliseconds); p = 0 while a candidate is uncompared."""
    from .rank_claims import top_k_settled

    strengths = np.where(compared, post.mean, np.nan)
    if not compared.all():
        return top_k_settled(strengths, np.zeros((0, int(compared.sum()))), k=k, recall=recall, margin=margin)
    chol = np.linalg.cholesky(post.cov + 1e-9 * np.eye(len(post.mean)))
    draws = post.mean + np.random.default_rng(seed).standard_normal((GATE_DRAWS, len(post.mean))) @ chol.T
    return top_k_settled(strengths, draws, k=k, recall=recall, margin=margin)


def simulate_stop_rule(theta: np.ndarray, *, k: int, recall: float, margin: float, level: float,
                       annotator_scales: np.ndarray, seed: int, draws: int = 200) -> dict:
    """One adaptive batch (`simulate_design`, sets of 10 with 3 overlap pairs) judged until the top-k stop rule holds
    or its pairs run out, checked as the service checks it: after a set, once `spacing` judgements passed since the
    last check (`recheck_spacing`), every candidate compared and the Laplace probability (`laplace_top_k`) within `STOP_GATE` of
    `level`, on `draws` exact posterior draws (`bt_bayes.bradley_terry_posterior(exact=True)`).

    Returns ``{"stopped_at": judgements at the stop or None, "pairs": C(n, 2), "judged_pairs": distinct pairs judged
    at the stop, "p": the rule's probability at the
    stop, "right": how many of the reported top k are truly among the top k (within the margin) at the stop,
    "need": ⌈recall · k⌉, "false_stop": the stop's claim is false in the truth (fewer than `need` right, or a true
    candidate left out more than the margin above the weakest listed: "missed_beyond_margin"), "checks": exact checks
    made, "held_on_unconverged_draws": checks whose probability reached the level on draws that missed the
    convergence targets (no stop: the rule decides on converged draws only)}``."""
    from .bt_bayes import bradley_terry_posterior, claim_converged
    from .rank_claims import top_k_right, top_k_settled

    theta = np.asarray(theta, float)
    n = len(theta)
    state = {"last": None, "checks": 0, "p": None, "top": None, "judged_pairs": None}
    spacing = recheck_spacing(n)

    def stop(counts: np.ndarray, done: int) -> bool:
        if state["last"] is not None and done - state["last"] < spacing:
            return False
        compared = (counts.sum(0) + counts.sum(1)) > 0
        if not compared.all():
            return False
        state["last"] = done
        if laplace_top_k(posterior(counts), compared, k=k, recall=recall, margin=margin)["p"] < level - STOP_GATE:
            return False
        state["checks"] += 1
        post = bradley_terry_posterior(counts, n_draws=0, exact=True, gibbs_draws=draws, seed=seed)
        figures = top_k_settled(post.strengths, post.draws, k=k, recall=recall, margin=margin)
        ok = post.convergence is not None and claim_converged(figures.get("held", np.ones(4)))
        state.update(p=figures["p"], top=figures["top"], judged_pairs=int(np.count_nonzero(np.triu(counts + counts.T))),
                     unconverged=state.get("unconverged", 0) + (figures["p"] >= level and not ok))
        return figures["p"] >= level and ok  # converged draws only (`bt_bayes.claim_converged`)

    run = simulate_design(theta, "adaptive", annotator_scales=annotator_scales, budget=n * (n - 1), seed=seed,
                          stop=stop)
    need = int(np.ceil(recall * k - 1e-9))
    out = {"stopped_at": run["stopped_at"], "pairs": n * (n - 1) // 2, "judged_pairs": None, "p": None,
           "right": None, "need": need,
           "false_stop": False, "checks": state["checks"]}
    out["held_on_unconverged_draws"] = state.get("unconverged", 0)
    if run["stopped_at"] is not None:
        right = int(top_k_right(theta, state["top"], margin)[0])
        missed = np.delete(theta, state["top"]).max() > theta[state["top"]].min() + margin
        out.update(p=state["p"], right=right, false_stop=right < need or bool(missed), missed_beyond_margin=bool(missed),
                   judged_pairs=state["judged_pairs"])
    return out
