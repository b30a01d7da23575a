"""Evaluate a similarity method against a graded gold set.

``evaluate_method(gold_pairs, method, calibration=None|'linear'|'isotonic')`` returns a JSON-ready dict:

- ``rmse``, ``spearman``, ``pearson``, ``n_pairs`` over all pairs (pooled), and ``per_reference``
  ``{reference_id: {rmse, spearman, pearson, n}}``. RMSE is the paper's measure; it rewards matching the gold's
  *scale* (a method whose cosines sit in [0.6, 1] is penalised even when it ranks perfectly), so Spearman
  (ranking) and Pearson (linear agreement) are given beside it.
- ``calibration``: with ``'linear'`` or ``'isotonic'``, a map from the method's scores to the gold scale is fit
  on the *other* references' pairs and applied to the held-out reference (leave-one-reference-out); the
  top-level metrics are then on the calibrated scores and ``raw`` holds the uncalibrated ones.
- ``directionality``: the gold is directional (reference → candidate; the released file scores the three
  references against one another in both directions, e.g. 16977 2 → 16977 1 = 0.81 but 16977 1 → 16977 2 =
  0.47 in the file; 0.95 vs 0.23 in the paper's Table 4). The section reports the gold's asymmetry on those pairs, the method's measured asymmetry
  (pair_scores(a, b) vs pair_scores(b, a) on every gold pair) and whether the method reproduces the direction
  of the gold's asymmetry. Symmetric (cosine) methods cannot.
- ``predictions``: one row per gold pair with the gold, raw and (if any) calibrated prediction, and the
  prediction in the reverse direction.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from core.numeric import finite_or_none

from .gold_files import GoldPair, references
from .metrics import summary

RMSE_NOTE = ("RMSE measures absolute deviation from the gold scale: a method that ranks candidates perfectly "
             "but on a different scale (e.g. cosines between 0.6 and 1) gets a poor RMSE. Read it beside "
             "Spearman (ranking) and Pearson (linear agreement), or calibrate.")


def _fit_map(kind: str, x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    if kind == "linear":
        if x.size < 2 or np.ptp(x) == 0:
            mean = float(np.mean(y)) if y.size else 0.0
            return lambda z: np.full(np.shape(z), mean)
        slope, intercept = np.polyfit(x, y, 1)
        return lambda z: np.clip(slope * np.asarray(z, float) + intercept, 0.0, 1.0)
    if kind == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0.0, y_max=1.0)
        iso.fit(x, y)
        return lambda z: iso.predict(np.asarray(z, float))
    raise ValueError(f"calibration must be None, 'linear' or 'isotonic', not {kind!r}")


def calibrate_leave_one_reference_out(pred: np.ndarray, gold: np.ndarray, groups: Sequence[str], kind: str) -> np.ndarray:
    """Calibrated predictions: for each reference, a map fit on all other references' (pred, gold) pairs."""
    pred, gold, groups = np.asarray(pred, float), np.asarray(gold, float), np.asarray(groups, dtype=object)
    uniq = list(dict.fromkeys(groups.tolist()))
    if len(uniq) < 2:
        raise ValueError("calibration needs at least two references (it is fit on the other references)")
    out = np.empty_like(pred)
    for g in uniq:
        held = groups == g
        f = _fit_map(kind, pred[~held], gold[~held])
        out[held] = f(pred[held])
    return out


def _directionality(pairs: list[GoldPair], pred: np.ndarray, reverse: np.ndarray, method) -> dict:
    index = {(p.reference_id, p.candidate_id): i for i, p in enumerate(pairs)}
    both = []
    for (a, b), i in index.items():
        j = index.get((b, a))
        if j is not None and a < b:
            both.append({
                "a": a, "b": b,
                "gold_a_to_b": pairs[i].score, "gold_b_to_a": pairs[j].score,
                "predicted_a_to_b": float(pred[i]), "predicted_b_to_a": float(pred[j]),
            })
    measured = float(np.max(np.abs(pred - reverse))) if pred.size else 0.0
    agree = []
    for row in both:
        g = row["gold_a_to_b"] - row["gold_b_to_a"]
        d = row["predicted_a_to_b"] - row["predicted_b_to_a"]
        if abs(g) > 1e-9:
            agree.append(bool(abs(d) > 1e-6 and np.sign(d) == np.sign(g)))
    gold_asym = [abs(r["gold_a_to_b"] - r["gold_b_to_a"]) for r in both]
    pred_asym = [abs(r["predicted_a_to_b"] - r["predicted_b_to_a"]) for r in both]
    symmetric = bool(getattr(method, "symmetric", True))
    agreement = (sum(agree) / len(agree)) if agree else None
    reproduces = bool(measured > 1e-6 and agreement is not None and agreement > 0.5)
    if symmetric and measured <= 1e-6:
        note = "The method is symmetric (sim(A, B) = sim(B, A)), so it cannot reproduce the gold's A→B ≠ B→A."
    elif reproduces:
        note = "The method is asymmetric and orders the two directions as the gold does on most bidirectional pairs."
    else:
        note = "The method is asymmetric but does not order the two directions as the gold does."
    return {
        "method_symmetric": symmetric,
        "max_abs_asymmetry_measured": measured,
        "bidirectional_pairs": both,
        "gold_mean_abs_asymmetry": finite_or_none(float(np.mean(gold_asym))) if gold_asym else None,
        "predicted_mean_abs_asymmetry": finite_or_none(float(np.mean(pred_asym))) if pred_asym else None,
        "direction_agreement": agreement,
        "reproduces_directionality": reproduces,
        "note": note,
    }


def _metrics_block(pred: np.ndarray, gold: np.ndarray, groups: np.ndarray) -> dict:
    overall = summary(pred, gold)
    per_ref = {}
    for g in dict.fromkeys(groups.tolist()):
        m = groups == g
        per_ref[g] = summary(pred[m], gold[m])
    rmses = [v["rmse"] for v in per_ref.values() if v["rmse"] is not None]
    return {"rmse": overall["rmse"], "spearman": overall["spearman"], "pearson": overall["pearson"],
            "n_pairs": overall["n"], "per_reference": per_ref,
            "mean_rmse_per_reference": finite_or_none(float(np.mean(rmses))) if rmses else None}


def evaluate_method(gold_pairs: list[GoldPair], method, calibration: str | None = None,
                    progress: Callable[[float, str], None] | None = None) -> dict:
    """Score ``method`` (already fitted, see the registry) on ``gold_pairs``; see the module docstring."""
    if not gold_pairs:
        raise ValueError("no gold pairs")
    if calibration not in (None, "linear", "isotonic"):
        raise ValueError(f"calibration must be None, 'linear' or 'isotonic', not {calibration!r}")
    refs = [p.reference_text for p in gold_pairs]
    cands = [p.candidate_text for p in gold_pairs]
    gold = np.array([p.score for p in gold_pairs], dtype=float)
    groups = np.array([p.reference_id for p in gold_pairs], dtype=object)
    if progress:
        progress(0.0, "scoring gold pairs")
    raw = np.asarray(method.pair_scores(refs, cands), dtype=float)
    if progress:
        progress(0.5, "scoring reverse direction")
    reverse = np.asarray(method.pair_scores(cands, refs), dtype=float)
    pred = raw if calibration is None else calibrate_leave_one_reference_out(raw, gold, groups, calibration)
    result = {
        "method": method.describe() if hasattr(method, "describe") else {"name": getattr(method, "name", "?")},
        "calibration": calibration,
        **_metrics_block(pred, gold, groups),
        "n_references": len(references(gold_pairs)),
    }
    if calibration is not None:
        result["raw"] = _metrics_block(raw, gold, groups)
    result["directionality"] = _directionality(gold_pairs, raw, reverse, method)
    result["predictions"] = [
        {"reference_id": p.reference_id, "candidate_id": p.candidate_id, "gold": p.score,
         "predicted": float(pred[i]), "predicted_raw": float(raw[i]), "predicted_reverse": float(reverse[i])}
        for i, p in enumerate(gold_pairs)
    ]
    result["notes"] = {"rmse": RMSE_NOTE}
    if progress:
        progress(1.0, "done")
    return result
