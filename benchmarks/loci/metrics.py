"""Metrics of the Loci Similes benchmark, vectorised with numpy (no Python loop over pairs).

Conventions
-----------
* Classes: 0 = no match, 1 = ``cit.``, 2 = ``cf.``, 3 = a gold link of unknown type (counted only in the
  pooled view). "Pooled" (``all``) merges every positive class into one.
* Queries index rows ``0..nq-1``, sources columns ``0..ns-1``; gold is given as parallel arrays
  ``gold_q, gold_s, gold_cls`` (one entry per distinct pair).
* Rankings are ``indices`` (nq, depth) into the sources, best first, ``-1`` = padding (nothing retrieved).
* Per-query values are ``NaN`` where a metric is undefined for that query (e.g. recall of ``cf.`` for a
  query without ``cf.`` gold); macro averages ignore ``NaN`` and say how many queries they averaged.
"""
from __future__ import annotations

import math

import numpy as np

# f1_curve and plateau_threshold live with the rerankers, which tune their thresholds the same way.
from detection.methods.rerank.thresholds import f1_curve, plateau_threshold  # noqa: F401

CLASS_IDS = {"none": 0, "cit.": 1, "cf.": 2, "link": 3}
CLASS_NAMES = {v: k for k, v in CLASS_IDS.items()}
VIEWS = ("all", "cit.", "cf.")  # pooled, then per class
DEFAULT_KS = (1, 5, 10, 20, 50, 100, 1000)
SWEEP_KS = (1, 5, 10, 20, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000)


def _view_mask(cls: np.ndarray, view: str) -> np.ndarray:
    if view == "all":
        return cls > 0
    return cls == CLASS_IDS[view]


# ------------------------------------------------------------------------------------------------ retrieval
def retrieved_gold_classes(indices: np.ndarray, gold_q, gold_s, gold_cls, n_sources: int, *,
                           scores: np.ndarray | None = None, ties: str = "as_ranked") -> np.ndarray:
    """Class of every retrieved item (0 when the pair is not gold).

    Args:
        indices: (nq, depth) int, best first; ``-1`` = padding.
        gold_q, gold_s, gold_cls: gold pairs (row, column, class id), one per distinct pair.
        n_sources: number of sources (columns).
        scores: (nq, depth) scores; needed for ``ties`` other than ``as_ranked``.
        ties: ``as_ranked`` (the order given), ``pessimistic`` (inside a group of equal scores the gold items
            are put last) or ``optimistic`` (put first). Ties running past the depth cannot be seen.

    Returns:
        (nq, depth) int8 array of class ids, reordered inside tie groups as asked.
    """
    indices = np.asarray(indices)
    nq, depth = indices.shape
    codes = np.asarray(gold_q, np.int64) * n_sources + np.asarray(gold_s, np.int64)
    order = np.argsort(codes, kind="stable")
    codes, gcls = codes[order], np.asarray(gold_cls, np.int8)[order]
    flat = np.arange(nq, dtype=np.int64)[:, None] * n_sources + indices.astype(np.int64)
    if codes.size:
        pos = np.searchsorted(codes, flat)
        pos_c = np.minimum(pos, codes.size - 1)
        found = (codes[pos_c] == flat) & (indices >= 0)
        hits = np.where(found, gcls[pos_c], 0).astype(np.int8)
    else:
        hits = np.zeros((nq, depth), np.int8)
    if ties != "as_ranked" and depth > 1:
        if scores is None:
            raise ValueError("ties handling needs scores")
        sc = np.asarray(scores, np.float64)
        sc = np.where(indices >= 0, sc, -np.inf)
        grp = np.concatenate([np.zeros((nq, 1), np.int64), np.cumsum(sc[:, 1:] != sc[:, :-1], axis=1)], axis=1)
        is_gold = (hits > 0).astype(np.int64)
        key = grp * 2 + (is_gold if ties == "pessimistic" else 1 - is_gold)
        hits = np.take_along_axis(hits, np.argsort(key, axis=1, kind="stable"), axis=1)
    return hits


def gold_counts(gold_q, gold_cls, n_queries: int) -> dict[str, np.ndarray]:
    """Number of gold sources per query, for each view (``all``, ``cit.``, ``cf.``)."""
    gq = np.asarray(gold_q, np.int64)
    gc = np.asarray(gold_cls, np.int8)
    return {v: np.bincount(gq[_view_mask(gc, v)], minlength=n_queries).astype(np.int64) for v in VIEWS}


def recall_at_k(hits: np.ndarray, n_gold: np.ndarray, k: int, view: str = "all") -> np.ndarray:
    """Per-query Recall@k.

    Formula: R@k(q) = |{relevant sources of q among its top k}| / |{relevant sources of q}|, with "relevant"
    meaning a gold pair of the view's class (any class for ``all``). ``NaN`` for a query without relevant
    sources. ``k`` larger than the ranking depth counts what was retrieved (padding ``-1`` counts as a miss).

    Args:
        hits: (nq, depth) class ids from :func:`retrieved_gold_classes`.
        n_gold: (nq,) number of relevant sources per query for this view.
        k: the cut-off.
        view: ``all``, ``cit.`` or ``cf.``.

    Returns:
        (nq,) float64.
    """
    found = _view_mask(hits[:, :k], view).sum(axis=1).astype(np.float64)
    n = np.asarray(n_gold, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, found / n, np.nan)


def mrr_at_k(hits: np.ndarray, n_gold: np.ndarray, k: int, view: str = "all") -> np.ndarray:
    """Per-query reciprocal rank at k.

    Formula: RR@k(q) = 1 / rank of the first relevant source of q if that rank <= k, else 0; ``NaN`` for a
    query without relevant sources. MRR@k is the macro mean of RR@k over queries.

    Returns:
        (nq,) float64.
    """
    m = _view_mask(hits[:, :k], view)
    any_hit = m.any(axis=1)
    first = np.argmax(m, axis=1) + 1
    rr = np.where(any_hit, 1.0 / first, 0.0)
    return np.where(np.asarray(n_gold) > 0, rr, np.nan)


def gold_ranks(indices: np.ndarray, gold_q, gold_s, n_sources: int) -> np.ndarray:
    """1-based rank of every gold pair in its query's ranking (0 = not retrieved within the depth).

    Returns:
        (n_gold,) int64 aligned with ``gold_q``/``gold_s``.
    """
    indices = np.asarray(indices)
    nq, depth = indices.shape
    flat = (np.arange(nq, dtype=np.int64)[:, None] * n_sources + indices.astype(np.int64))
    flat = np.where(indices >= 0, flat, -1).ravel()
    order = np.argsort(flat, kind="stable")
    sf = flat[order]
    codes = np.asarray(gold_q, np.int64) * n_sources + np.asarray(gold_s, np.int64)
    if sf.size == 0 or codes.size == 0:
        return np.zeros(codes.size, np.int64)
    pos = np.minimum(np.searchsorted(sf, codes), sf.size - 1)
    ok = sf[pos] == codes
    return np.where(ok, order[pos] % depth + 1, 0).astype(np.int64)


def macro(values: np.ndarray) -> tuple[float, int]:
    """(mean over non-NaN entries, how many); NaN when none."""
    v = np.asarray(values, np.float64)
    v = v[~np.isnan(v)]
    return (float(v.mean()) if v.size else float("nan")), int(v.size)


def mean_std(fold_values) -> dict:
    """Mean and sample standard deviation (ddof = 1) over folds, ignoring NaN folds."""
    v = np.asarray([x for x in fold_values if x is not None and not (isinstance(x, float) and math.isnan(x))],
                   np.float64)
    return {"mean": float(v.mean()) if v.size else None,
            "std": float(v.std(ddof=1)) if v.size > 1 else (0.0 if v.size == 1 else None),
            "folds": [None if (x is None or (isinstance(x, float) and math.isnan(x))) else float(x)
                      for x in fold_values]}


# ------------------------------------------------------------------------------------- pairwise classification
def per_query_prf(pred: np.ndarray, gold: np.ndarray, view: str = "all") -> dict[str, np.ndarray]:
    """One-vs-rest counts and P/R/F1 per query (row) of a full query x source grid.

    Formulas (per query q, positive = the view's class, ``all`` = any reference class):
        TP_q = #(pred pos & gold pos), FP_q = #(pred pos & gold neg), FN_q = #(pred neg & gold pos)
        P_q = TP_q / (TP_q + FP_q)   (if nothing predicted: 1 when q has no gold, else 0)
        R_q = TP_q / (TP_q + FN_q)   (if q has no gold: 1 when nothing predicted, else 0)
        F1_q = 2 P_q R_q / (P_q + R_q) (0 when P_q + R_q = 0)
    A query with neither gold nor predictions therefore scores 1/1/1, one with predictions but no gold 0/0/0.
    For ``all`` a ``cit.`` predicted as ``cf.`` is a true positive (a reference was found).

    Args:
        pred, gold: (nq, ns) int class ids.

    Returns:
        dict with ``tp, fp, fn, n_gold`` (int64) and ``p, r, f1`` (float64), each (nq,).
    """
    pp = _view_mask(np.asarray(pred), view)
    gp = _view_mask(np.asarray(gold), view)
    tp = (pp & gp).sum(axis=1).astype(np.int64)
    fp = (pp & ~gp).sum(axis=1).astype(np.int64)
    fn = (~pp & gp).sum(axis=1).astype(np.int64)
    return _prf_from_counts(tp, fp, fn)


def _prf_from_counts(tp, fp, fn) -> dict[str, np.ndarray]:
    tp, fp, fn = (np.asarray(x, np.float64) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), np.where(tp + fn == 0, 1.0, 0.0))
        r = np.where(tp + fn > 0, tp / (tp + fn), np.where(tp + fp == 0, 1.0, 0.0))
        f1 = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return {"tp": tp.astype(np.int64), "fp": fp.astype(np.int64), "fn": fn.astype(np.int64),
            "n_gold": (tp + fn).astype(np.int64), "p": p, "r": r, "f1": f1}


def prf_summary(per_query: dict[str, np.ndarray]) -> dict:
    """Macro (per-query) P/R/F1 over queries with gold (``macro_gold``) and over all queries (``macro_all``),
    plus pooled (micro) P/R/F1 from the summed counts.

    Formulas: macro_X = mean over the query set of P_q (R_q, F1_q); pooled P = ΣTP / (ΣTP + ΣFP),
    pooled R = ΣTP / (ΣTP + ΣFN), pooled F1 = 2PR / (P + R).
    """
    has = per_query["n_gold"] > 0
    TP, FP, FN = (int(per_query[k].sum()) for k in ("tp", "fp", "fn"))
    P = TP / (TP + FP) if TP + FP else 0.0
    R = TP / (TP + FN) if TP + FN else 0.0
    out = {"tp": TP, "fp": FP, "fn": FN, "pooled": {"p": P, "r": R, "f1": 2 * P * R / (P + R) if P + R else 0.0}}
    for name, mask in (("macro_gold", has), ("macro_all", np.ones_like(has))):
        out[name] = {m: (float(per_query[m][mask].mean()) if mask.any() else None) for m in ("p", "r", "f1")}
        out[name]["n_queries"] = int(mask.sum())
    return out


def confusion_matrix(pred: np.ndarray, gold: np.ndarray, n_classes: int = 3) -> np.ndarray:
    """(n_classes, n_classes) counts, rows = gold class, columns = predicted class."""
    g = np.asarray(gold, np.int64).ravel()
    p = np.asarray(pred, np.int64).ravel()
    return np.bincount(g * n_classes + p, minlength=n_classes * n_classes).reshape(n_classes, n_classes)


def error_rates(fp_q, fn_q, n_q, *, query_mask=None) -> dict:
    """SMR, FPR and FNR, in both readings of the paper's Appendix B.

    Global (``global``): SMR = (ΣFP + ΣFN) / ΣN, FPR = ΣFP / ΣN, FNR = ΣFN / ΣN, sums over every query of the
    evaluation, N_q = number of pairs of query q (its sources), so ΣN = all query x source pairs.
    Per-query mean (``per_query_all``): SMR = mean_q (FP_q + FN_q) / N_q, FPR = mean_q FP_q / N_q,
    FNR = mean_q FN_q / N_q over all queries. ``per_query_gold`` is the same mean over the queries with at least
    one gold link only (what the ``locisimiles`` package does: queries without gold rows, i.e. the
    distractors, then drop out and their false positives are never counted).

    When every query is scored against the same N sources (a full grid), ``global`` and ``per_query_all``
    are equal by algebra; they differ when N_q varies, and ``per_query_gold`` differs whenever distractor
    queries produce false positives.

    Args:
        fp_q, fn_q: (nq,) false positives / false negatives per query.
        n_q: (nq,) or scalar: pairs per query.
        query_mask: (nq,) bool, the queries with gold (for ``per_query_gold``); default: none reported.
    """
    fp = np.asarray(fp_q, np.float64)
    fn = np.asarray(fn_q, np.float64)
    n = np.broadcast_to(np.asarray(n_q, np.float64), fp.shape)
    tot = n.sum()
    out = {"global": {"smr": float((fp.sum() + fn.sum()) / tot) if tot else None,
                      "fpr": float(fp.sum() / tot) if tot else None,
                      "fnr": float(fn.sum() / tot) if tot else None,
                      "n_pairs": int(tot)}}
    with np.errstate(invalid="ignore", divide="ignore"):
        s, f, m = (fp + fn) / n, fp / n, fn / n
    masks = [("per_query_all", np.ones(fp.shape, bool))]
    if query_mask is not None:
        masks.append(("per_query_gold", np.asarray(query_mask, bool)))
    for name, mask in masks:
        out[name] = {"smr": float(s[mask].mean()) if mask.any() else None,
                     "fpr": float(f[mask].mean()) if mask.any() else None,
                     "fnr": float(m[mask].mean()) if mask.any() else None, "n_queries": int(mask.sum())}
    return out


# ------------------------------------------------------------------------------------------ threshold tuning
def decide(probs: np.ndarray, thresholds: dict) -> np.ndarray:
    """Class decisions from class scores and per-class thresholds.

    Args:
        probs: (..., 3) scores for (none, cit., cf.), or (...,) one reference score (then ``thresholds``
            has ``"all"`` and the positives get class 3, a reference of unknown type).
        thresholds: ``{"cit.": t1, "cf.": t2}`` or ``{"all": t}``.

    Returns:
        int8 class ids: a class is a candidate when its score reaches its threshold; among candidates the higher
        score wins (``cit.`` on ties); no candidate = no match (0).
    """
    p = np.asarray(probs, np.float64)
    if "all" in thresholds:
        return np.where(p >= thresholds["all"], 3, 0).astype(np.int8)
    c1 = p[..., 1] >= thresholds["cit."]
    c2 = p[..., 2] >= thresholds["cf."]
    pick2 = c2 & (~c1 | (p[..., 2] > p[..., 1]))
    return np.where(pick2, 2, np.where(c1, 1, 0)).astype(np.int8)


# --------------------------------------------------------------------------------------- retrieve and rerank
def depth_sweep(indices: np.ndarray, gold_q, gold_s, gold_cls, n_sources: int, ks=SWEEP_KS, *,
                rerank_pred: np.ndarray | None = None, view: str = "all") -> list[dict]:
    """Retrieval-only vs retrieve-and-rerank over retrieval depths k (Table 12 / Figure 12), one fold.

    Retrieval-only predicts every top-k pair positive; retrieve-and-rerank keeps a top-k pair positive only if
    the reranker's decision (``rerank_pred``, an (nq, ns) class grid) is positive (for ``view`` a class, of that
    class). All other pairs of the nq x ns grid are negative. Counts come from searchsorted over ranks, no grid
    scan per k.

    Formulas: TP = gold pairs predicted positive, FP = predicted - TP, FN = gold - TP,
    F1 = 2TP / (2TP + FP + FN), FPR = FP / N, SMR = (FP + FN) / N with N = nq x ns (global reading; per-query
    means equal these because every query has ns candidates). ``inspect`` = positive predictions, the passages a
    philologist has to read.

    Returns:
        one dict per k with ``ret`` and (if ``rerank_pred`` given) ``rer`` sub-dicts.
    """
    indices = np.asarray(indices)
    nq = indices.shape[0]
    N = nq * n_sources
    gcls = np.asarray(gold_cls, np.int8)
    gmask = _view_mask(gcls, view)
    ranks = gold_ranks(indices, gold_q, gold_s, n_sources)  # 0 = not retrieved
    n_gold = int(gmask.sum())
    valid = (indices >= 0)
    n_valid_cum = np.cumsum(valid.sum(axis=0))  # retrieved pairs over all queries at depth d
    gr = np.sort(np.where(gmask & (ranks > 0), ranks, np.iinfo(np.int64).max))
    if rerank_pred is not None:
        rp = np.asarray(rerank_pred)
        sel = np.take_along_axis(rp, np.maximum(indices, 0), axis=1)
        pos_mask = (_view_mask(sel, view) if view != "all" else sel > 0) & valid
        depth_pos = np.nonzero(pos_mask)[1] + 1  # rank of every positive rerank decision inside the pool
        depth_pos.sort()
        # reranked TPs: retrieved gold pairs that the reranker also keeps (class-correct for a class view)
        gq = np.asarray(gold_q, np.int64)
        gs = np.asarray(gold_s, np.int64)
        kept = _view_mask(rp[gq, gs], view) if view != "all" else rp[gq, gs] > 0
        rr = np.sort(np.where(gmask & (ranks > 0) & kept, ranks, np.iinfo(np.int64).max))
    out = []
    for k in ks:
        kk = min(k, indices.shape[1])
        npred = int(n_valid_cum[kk - 1]) if kk > 0 else 0
        tp = int(np.searchsorted(gr, kk, side="right"))
        row = {"k": int(k), "ret": _sweep_row(tp, npred, n_gold, N)}
        if rerank_pred is not None:
            npr = int(np.searchsorted(depth_pos, kk, side="right"))
            tpr = int(np.searchsorted(rr, kk, side="right"))
            row["rer"] = _sweep_row(tpr, npr, n_gold, N)
        out.append(row)
    return out


def _sweep_row(tp, npred, n_gold, N):
    fp, fn = npred - tp, n_gold - tp
    p = tp / npred if npred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return {"inspect": npred, "tp": tp, "fp": fp, "fn": fn, "p": p, "r": r,
            "f1": (2 * tp / (2 * tp + fp + fn)) if (2 * tp + fp + fn) else 0.0,
            "fpr": fp / N if N else None, "fnr": fn / N if N else None, "smr": (fp + fn) / N if N else None}
