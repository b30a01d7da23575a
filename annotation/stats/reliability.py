"""Per-annotator reliability beside the agreement figures (pure numpy).

* :func:`agreement_with_majority`: for each annotator, the share of their (first) judgements that
  agree with the majority of the *other* annotators on the same unit (leave-one-out, so an annotator
  does not vote on their own benchmark; units where the others split evenly are skipped).
  Orientation-invariant: it compares chosen candidates.
* :func:`response_times`: median response time per annotator and the share of implausibly fast
  judgements (below ``fast_ms``), the usual sign of clicking through.

* :func:`separation_reliability`: scale-separation reliability of a batch's Bradley–Terry strengths, as measured
  and deflated for adaptive designs.

Consistency (circular triads per decided triple) and test–retest agreement are in ``triads`` and
``agreement``.
"""

from __future__ import annotations

import numpy as np

from .agreement import label_table
from .bt_bayes import bt_map
from .judgement_arrays import Judgements

__all__ = ["agreement_with_majority", "response_times", "separation_reliability", "FAST_MS"]

FAST_MS = 1500  # reading a reference and two verses takes longer than 1.5 s


def agreement_with_majority(j: Judgements) -> list[dict]:
    """Leave-one-out agreement with the majority of the other annotators, per annotator.

    Returns:
        One dict per annotator index: ``annotator, n_units`` (units with a decided majority of the
        others), ``agreement`` (share agreeing; NaN with ``reason`` when n_units = 0).
    """
    lab = label_table(j).labels
    m = lab.shape[1]
    ones = (lab == 1).sum(1)
    zeros = (lab == 0).sum(1)
    out = []
    for k in range(m):
        mine = lab[:, k]
        seen = mine >= 0
        o1 = ones - (mine == 1)
        o0 = zeros - (mine == 0)
        decided = seen & (o1 != o0)
        n = int(decided.sum())
        if not n:
            out.append({"annotator": k, "n_units": 0, "agreement": float("nan"),
                        "reason": "no unit with a majority among the other annotators"})
            continue
        majority = (o1 > o0).astype(np.int8)
        out.append({"annotator": k, "n_units": n, "agreement": float((mine[decided] == majority[decided]).mean()),
                    "reason": None})
    return out


def response_times(annotator, response_ms, n_annotators: int, fast_ms: int = FAST_MS) -> list[dict]:
    """Median response time and share of fast judgements per annotator.

    Args:
        annotator: annotator index per judgement; response_ms: milliseconds (NaN = unknown).
        n_annotators: m; fast_ms: threshold below which a judgement counts as implausibly fast.

    Returns:
        One dict per annotator: ``annotator, n_timed, median_ms, fast_share`` (NaN when no timing)
        and ``flag`` (True when more than 10 % of timed judgements are fast or the median is fast).
    """
    ann = np.asarray(annotator, np.int64)
    ms = np.asarray(response_ms, float)
    out = []
    for k in range(n_annotators):
        x = ms[(ann == k) & np.isfinite(ms)]
        if not len(x):
            out.append({"annotator": k, "n_timed": 0, "median_ms": float("nan"), "fast_share": float("nan"),
                        "flag": False})
            continue
        med = float(np.median(x))
        fast = float((x < fast_ms).mean())
        out.append({"annotator": k, "n_timed": len(x), "median_ms": med, "fast_share": fast,
                    "flag": bool(fast > 0.10 or med < fast_ms)})
    return out


def separation_reliability(counts, strengths, sd) -> dict:
    """Scale-separation reliability of one batch, measured and deflated (docs/statistics.md, issue 46).

    ``measured``: the comparative-judgement SSR, (var θ̂ − mean SE²) / var θ̂, with θ̂ the point fit (`bt_map`, weak
    N(0, 3²) prior) and SE² the diagonal of its centred inverse Hessian: adaptive pairing spreads θ̂ out and
    inflates it. ``deflated``: the posterior (EAP) reliability var(m) / (var(m) + mean s²) of the posterior means
    `strengths` and SDs `sd` under the batch's learnt prior, which a design chosen from the judgements does not
    bias. Both over the compared candidates (finite `strengths`); NaN with fewer than 3.
    """
    strengths, sd = np.asarray(strengths, float), np.asarray(sd, float)
    ok = np.isfinite(strengths) & np.isfinite(sd)
    if ok.sum() < 3:
        return {"measured": float("nan"), "deflated": float("nan"), "n_candidates": int(ok.sum())}
    c = np.asarray(counts, float)[np.ix_(ok, ok)]
    theta, h = bt_map(c)
    centre = np.eye(len(c)) - 1.0 / len(c)
    se2 = np.diag(centre @ np.linalg.inv(h) @ centre)
    spread, means = np.var(theta), np.var(strengths[ok])
    return {"measured": float((spread - se2.mean()) / spread), "n_candidates": int(ok.sum()),
            "deflated": float(means / (means + np.mean(sd[ok] ** 2)))}
