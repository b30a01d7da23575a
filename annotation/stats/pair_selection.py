"""Adaptive pair selection for one batch: ask the comparisons that tell most about the ranking.

Method: the information-gain criterion of ASAP (Mikhailiuk, Wilmot, Perez-Ortiz, Yue & Mantiuk 2020, "Active
sampling for pairwise comparisons via approximate message passing and information gain maximization", ICPR),
in its cheap form. The current posterior of the Bradley–Terry strengths is the Laplace approximation
N(μ, Σ) (`bt_bayes.bt_map`, fixed prior SD 3 for speed); for a pair (i, j) the difference d = θ_i − θ_j has
variance v_ij = Σ_ii + Σ_jj − 2Σ_ij, the outcome's probability is p = σ(μ_i − μ_j), and one comparison carries
Fisher information p(1 − p) about d. The expected information gain of the comparison is approximated by the
Gaussian-update formula

    EIG_ij ≈ ½ · log(1 + p(1 − p) · v_ij),

high for pairs that are both uncertain (large v) and close (p near ½), as ASAP's exact gain is. A set takes its
pairs greedily by EIG as a matching (no candidate twice in one set, ASAP's batch mode uses a spanning tree for
the same reason: spread the questions), plus a share of uniformly random pairs for exploration (so that a
misfit posterior cannot starve a region of the graph). Pure numpy; the scheduler
(`annotation/services/scheduling.py`) and the design simulation (`simulate_design`) both call `choose_pairs`.

Stop rule helper: `adjacent_order_probabilities` gives, for the ranking by posterior mean, the probability that
each candidate is really stronger than the next one, Φ((μ_r − μ_{r+1}) / √v), from the same posterior.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm, spearmanr

from .bt_bayes import bt_map

__all__ = ["Posterior", "posterior", "expected_information_gain", "choose_pairs", "adjacent_order_probabilities",
           "adjacent_rank_claims", "simulate_design", "compare_designs", "DESIGNS"]

SELECTION_PRIOR_SD = 3.0


@dataclass(frozen=True)
class Posterior:
    mean: np.ndarray  # (n,) posterior mode (Laplace)
    cov: np.ndarray  # (n × n)


def posterior(counts: np.ndarray, init: np.ndarray | None = None) -> Posterior:
    """Laplace posterior of the strengths from a win-count matrix (counts[i, j] = times i beat j)."""
    theta, h = bt_map(np.asarray(counts, float), SELECTION_PRIOR_SD, init=init, tol=1e-6, max_iter=30)
    return Posterior(theta, np.linalg.inv(h))


def expected_information_gain(post: Posterior) -> np.ndarray:
    """(n × n) approximate EIG of one more comparison of i and j (module docstring); diagonal 0."""
    mu, cov = post.mean, post.cov
    d = np.diag(cov)
    v = np.clip(d[:, None] + d[None, :] - 2.0 * cov, 0.0, None)
    p = expit(mu[:, None] - mu[None, :])
    gain = 0.5 * np.log1p(p * (1.0 - p) * v)
    np.fill_diagonal(gain, 0.0)
    return gain


def choose_pairs(post: Posterior, available_i: np.ndarray, available_j: np.ndarray, k: int, *,
                 explore_share: float, rng: np.random.Generator) -> list[int]:
    """Indices into the available pairs (item arrays `available_i`, `available_j`) for a set of k new pairs:
    round(k · explore_share) uniformly at random, the rest greedily by EIG with no candidate twice in the set
    (relaxed when the matching runs out). Returns at most k distinct indices, exploration picks last."""
    n_av = len(available_i)
    if k <= 0 or n_av == 0:
        return []
    k = min(k, n_av)
    n_explore = min(int(round(k * explore_share)), k)
    gain = expected_information_gain(post)[available_i, available_j]
    order = np.argsort(-gain, kind="stable")
    chosen: list[int] = []
    used: set[int] = set()
    for idx in order:
        if len(chosen) >= k - n_explore:
            break
        i, j = int(available_i[idx]), int(available_j[idx])
        if i in used or j in used:
            continue
        chosen.append(int(idx))
        used.update((i, j))
    if len(chosen) < k - n_explore:  # not enough disjoint pairs: fill by gain
        taken = set(chosen)
        chosen += [int(x) for x in order if int(x) not in taken][: k - n_explore - len(chosen)]
    rest = np.setdiff1d(np.arange(n_av), chosen)
    if n_explore and len(rest):
        chosen += [int(x) for x in rng.choice(rest, size=min(n_explore, len(rest)), replace=False)]
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


def simulate_design(theta: np.ndarray, design: str, *, annotator_scales: np.ndarray, budget: int, seed: int,
                    set_size: int = 10, overlap_per_set: int = 3, explore_share: float = 0.2,
                    checkpoints: list[int] | None = None, return_counts: bool = False) -> dict:
    """Serve sets of `set_size` to annotators in turn until `budget` judgements, under `design`:

    - ``exhaustive``: fresh pairs in a random permutation of all C(n, 2) (the Swaelens et al. design: every pair);
    - ``random``: the same, i.e. uniformly random fresh pairs (identical to exhaustive until all pairs are used,
      kept separate so that the figures name both);
    - ``adaptive``: fresh pairs by `choose_pairs` from the posterior after the judgements so far.

    In every design `overlap_per_set` of each set's pairs are second judgements by another annotator of pairs judged
    before (the agreement design), and no annotator sees a pair twice. Annotator k chooses i over j with
    probability σ((θ_i − θ_j) / s_k). Returns ``{"judgements": [...], "spearman": [...]}`` at the checkpoints
    (Spearman of the Laplace posterior mode with θ), and with `return_counts` the final count matrix and, per
    judgement, (annotator, i, j, i_won)."""
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
    out = {"judgements": [], "spearman": []}
    cp = 0
    post = None
    annotator = 0
    done = 0

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
        if design == "adaptive" and done > 0:
            post = posterior(counts, init=None if post is None else post.mean)
            avail = np.flatnonzero(fresh_mask)
            picks = [int(avail[x]) for x in choose_pairs(post, iu[avail], ju[avail], n_fresh,
                                                         explore_share=explore_share, rng=rng)]
        else:
            picks = []
            while len(picks) < n_fresh and perm_pos < n_pairs:
                p = int(perm[perm_pos])
                perm_pos += 1
                if fresh_mask[p]:
                    picks.append(p)
        if not picks and not second:
            break
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
            cp += 1
    if cp < len(checkpoints):  # ran out of pairs before the last checkpoint
        fit = posterior(counts)
        out["judgements"].append(done)
        out["spearman"].append(float(spearmanr(fit.mean, theta).statistic))
    if return_counts:
        out["counts"] = counts
        out["log"] = log
    return out


def compare_designs(theta: np.ndarray, *, annotator_scales: np.ndarray, seeds: int, target: float,
                    shares=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75), explore_share: float = 0.2, progress=None) -> dict:
    """The exhaustive, random and adaptive designs on the same simulated annotators and seeds.

    Budgets are `shares` of the exhaustive design's judgements (every pair once plus the overlap judgements of sets
    of 10 with 3). Returns {"exhaustive": {"judgements", "rho", "sd"}, "random"/"adaptive": [{"judgements", "rho",
    "sd", "min", "max"}] per budget, "needed": {design: judgements at which the mean ρ first reaches `target`
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
        out["needed"][design] = next((r["judgements"] for r in out[design] if r["rho"] >= target), None)
    out["needed"]["exhaustive"] = ex_j if out["exhaustive"]["rho"] >= target else None
    return out
