"""Inter- and intra-annotator agreement for pairwise-similarity judgements.

Labels are *which candidate won* in canonical order (``winner_is_b`` ∈ {0, 1}) for a unit
``(batch, a, b)``; never the clicked screen side. For inter-annotator statistics each annotator
contributes one label per unit: their *first* judgement (chronological; by ``timestamp`` if given,
else array order). Repeats by the same annotator feed :func:`retest_agreement` instead.

Orientation. ``winner_is_b`` needs *some* order of the two candidates (``a < b``), and that order
is arbitrary: batch position, verse id and export order are all defensible. The classic
coefficients below (Cohen, Fleiss, Krippendorff) estimate chance agreement from the marginal shares
of "a won" and "b won", so they change when the orientation rule changes although the judgements do
not (batch position correlates with similarity, so the lower position wins more often and chance
agreement rises). The ``*_symmetric`` coefficients and Kendall's ``u`` use a chance term symmetric
in the two candidates (each candidate chosen with probability ½, the marginals averaged over both
orientations of every unit) and are invariant to every orientation rule; they are the headline
figures. The classic ones remain for comparison with papers, labelled with their orientation rule.

Undefined values are ``NaN`` with a ``reason`` string, never a broken number:
no shared units; chance agreement equal to 1 (both annotators constant on the same category, or
all ratings in one category), where kappa/alpha is 0/0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from core.numeric import spearman as _spearman
from core.registries import Registry

from .judgement_arrays import Judgements

__all__ = [
    "AgreementResult",
    "KappaMatrix",
    "LabelTable",
    "label_table",
    "cohen_kappa",
    "cohen_kappa_matrix",
    "cohen_kappa_matrix_from_labels",
    "fleiss_kappa",
    "fleiss_kappa_judgements",
    "krippendorff_alpha_nominal",
    "krippendorff_alpha_judgements",
    "retest_agreement",
    "split_half_reliability",
    "spearman",
    "cohen_kappa_symmetric_matrix",
    "fleiss_kappa_symmetric",
    "krippendorff_alpha_symmetric",
    "kendall_u",
    "orientation_invariant_agreement",
]

NO_SHARED = "no shared units"
CHANCE_ONE = "chance agreement is 1 (all ratings in one category): kappa is 0/0"


@dataclass(frozen=True)
class AgreementResult:
    """A chance-corrected agreement coefficient.

    Attributes:
        value: the coefficient (NaN when undefined).
        observed: observed agreement (P̄ / p_o) or, for alpha, observed disagreement D_o.
        expected: chance agreement (P̄_e / p_e) or, for alpha, expected disagreement D_e.
        n_units: units used (judged by ≥ 2 raters for Fleiss/alpha, shared units for Cohen).
        n_ratings: ratings used.
        reason: why ``value`` is NaN (``None`` when defined).
        method: variant name.
    """

    value: float
    observed: float
    expected: float
    n_units: int
    n_ratings: int
    reason: str | None = None
    method: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class KappaMatrix:
    """Cohen's kappa for every annotator pair.

    Attributes:
        kappa: (m × m) float, NaN on the diagonal and where undefined.
        n_shared: (m × m) int, units both annotators judged (diagonal: units judged by the annotator).
        mean: mean of the defined off-diagonal values (upper triangle), NaN if none.
        reasons: ``{(i, j): reason}`` for undefined pairs (i < j).
    """

    kappa: np.ndarray
    n_shared: np.ndarray
    mean: float
    reasons: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LabelTable:
    """Unit × annotator label matrix (first judgement of each annotator on each unit).

    Attributes:
        labels: (U × m) int8, −1 = not judged, else ``winner_is_b``.
        units: (U,) global unit codes (see :attr:`Judgements.unit`), sorted.
    """

    labels: np.ndarray
    units: np.ndarray

    def counts(self) -> np.ndarray:
        """(U × 2) table: number of annotators choosing a (col 0) and b (col 1) per unit."""
        lab = self.labels
        return np.column_stack([(lab == 0).sum(1), (lab == 1).sum(1)]).astype(np.int64)


def label_table(j: Judgements) -> LabelTable:
    """Build the unit × annotator table from each annotator's first judgement per unit."""
    m = j.n_annotators
    if not len(j):
        return LabelTable(np.zeros((0, m), np.int8), np.zeros(0, np.int64))
    order = j.order()
    unit = j.unit[order]
    ann = j.annotator[order]
    code = unit * m + ann
    _, first = np.unique(code, return_index=True)  # first occurrence in chronological order
    sel = order[first]
    units, uinv = np.unique(j.unit[sel], return_inverse=True)
    lab = np.full((len(units), m), -1, np.int8)
    lab[uinv, j.annotator[sel]] = j.winner_is_b[sel]
    return LabelTable(lab, units)


def _kappa_from_confusion(conf: np.ndarray) -> tuple[float, float, float, str | None]:
    n = conf.sum()
    if n == 0:
        return float("nan"), float("nan"), float("nan"), NO_SHARED
    p = conf / n
    po = float(np.trace(p))
    pe = float(p.sum(1) @ p.sum(0))
    if np.isclose(pe, 1.0):
        return float("nan"), po, pe, "both annotators constant on the same category: kappa is 0/0"
    return (po - pe) / (1.0 - pe), po, pe, None


def cohen_kappa(x, y, categories=None) -> AgreementResult:
    """Cohen's (1960) kappa for two raters on the same units.

    ``κ = (p_o − p_e) / (1 − p_e)`` with ``p_o`` the share of units with equal labels and
    ``p_e = Σ_c p_{1c} p_{2c}`` from each rater's marginal proportions.

    Args:
        x, y: labels of rater 1 and rater 2 (same length; any hashable categories).
        categories: optional category list (default: union of observed labels).

    Returns:
        :class:`AgreementResult`; empty input → NaN ("no shared units"); both raters constant on
        the same category → NaN (0/0). One constant rater gives a defined 0 (as scikit-learn).
    """
    x = np.asarray(x)
    y = np.asarray(y)
    if x.shape != y.shape:
        raise ValueError("x and y must have the same length")
    cats = np.unique(np.concatenate([x, y])) if categories is None else np.asarray(categories)
    k = len(cats)
    xi = np.searchsorted(cats, x) if categories is None else np.array([list(cats).index(v) for v in x], int)
    yi = np.searchsorted(cats, y) if categories is None else np.array([list(cats).index(v) for v in y], int)
    conf = np.bincount(xi * k + yi, minlength=k * k).reshape(k, k) if k else np.zeros((0, 0))
    kap, po, pe, reason = _kappa_from_confusion(conf)
    return AgreementResult(kap, po, pe, int(len(x)), int(2 * len(x)), reason, "cohen")


def cohen_kappa_matrix_from_labels(labels: np.ndarray, n_categories: int = 2) -> KappaMatrix:
    """Cohen's kappa for all annotator pairs from a unit × annotator label matrix.

    Vectorised with indicator matrices ``X_c = [L == c]``: the pair confusion counts are
    ``n_cd = X_cᵀ X_d`` (K² matrix products), so all m(m−1)/2 pairs cost a few BLAS calls.

    Args:
        labels: (U × m) int array, −1 = missing, else category in ``[0, n_categories)``.
        n_categories: number of categories K.

    Returns:
        :class:`KappaMatrix` (per pair, on the units both judged).
    """
    lab = np.asarray(labels)
    m = lab.shape[1]
    dt = np.float32 if lab.shape[0] < 2 ** 24 else np.float64
    xs = [(lab == c).astype(dt) for c in range(n_categories)]
    conf = np.zeros((n_categories, n_categories, m, m))
    for c in range(n_categories):
        for d in range(n_categories):
            conf[c, d] = (xs[c].T @ xs[d]).astype(np.float64)
    n = conf.sum(axis=(0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(conf, axis1=0, axis2=1) / n
        row = conf.sum(1) / n  # rater i (row annotator) marginals: (K, m, m)
        col = conf.sum(0) / n
        pe = (row * col).sum(0)
        kappa = (po - pe) / (1.0 - pe)
    reasons = {}
    for i in range(m):
        for k in range(i + 1, m):
            if n[i, k] == 0:
                reasons[(i, k)] = NO_SHARED
            elif np.isclose(pe[i, k], 1.0):
                reasons[(i, k)] = "both annotators constant on the same category: kappa is 0/0"
    bad = (n == 0) | np.isclose(pe, 1.0)
    kappa = np.where(bad, np.nan, kappa)
    np.fill_diagonal(kappa, np.nan)
    iu = np.triu_indices(m, 1)
    vals = kappa[iu]
    mean = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    return KappaMatrix(kappa, n.round().astype(np.int64), mean, reasons)


def _labels(j) -> LabelTable:
    return j if isinstance(j, LabelTable) else label_table(j)


def cohen_kappa_matrix(j: Judgements | LabelTable) -> KappaMatrix:
    """Cohen's kappa for every annotator pair on the units both judged (first judgements).

    Args:
        j: judgements (all batches; a unit is ``(batch, a, b)``), or a precomputed
            :class:`LabelTable` (reuse one table for kappa, Fleiss and alpha).

    Returns:
        :class:`KappaMatrix`; ``mean`` averages the defined pairs (as the pilot's Table 1 mean).
    """
    return cohen_kappa_matrix_from_labels(_labels(j).labels, 2)


def fleiss_kappa(table, method: str = "per-item") -> AgreementResult:
    """Fleiss' kappa from a units × categories count table, allowing unequal raters per unit.

    Units rated by fewer than 2 raters are dropped. With ``n_i`` ratings on unit i,
    ``n_ic`` of them in category c, N units:

    * ``method="per-item"`` (default): ``P_i = Σ_c n_ic(n_ic − 1) / (n_i(n_i − 1))``,
      ``P̄ = (1/N) Σ_i P_i``, category proportions weighted by ratings
      ``p_c = Σ_i n_ic / Σ_i n_i``, ``P̄_e = Σ_c p_c²``, ``κ = (P̄ − P̄_e)/(1 − P̄_e)``.
      With equal ``n_i`` this is exactly Fleiss (1971) (= statsmodels ``fleiss_kappa``).
    * ``method="fleiss-cuzick"`` (two categories only; Fleiss & Cuzick 1979):
      ``κ = 1 − Σ_i x_i(n_i − x_i)/n_i / (N (n̄ − 1) p̄ q̄)``, x_i = ratings in category 1,
      ``n̄ = Σ n_i / N``, ``p̄ = Σ x_i / Σ n_i``. Equal to the above when all n_i are equal.

    Returns:
        :class:`AgreementResult` (``observed`` = P̄, ``expected`` = P̄_e); NaN with a reason when no
        unit has ≥ 2 ratings or all ratings fall in one category.
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError("table must be units × categories")
    ni = t.sum(1)
    t = t[ni >= 2]
    ni = ni[ni >= 2]
    n_units = len(ni)
    n_ratings = int(ni.sum())
    if n_units == 0:
        return AgreementResult(float("nan"), float("nan"), float("nan"), 0, 0,
                               "no unit rated by >= 2 raters", method)
    p_c = t.sum(0) / ni.sum()
    pe = float((p_c ** 2).sum())
    p_i = ((t * (t - 1)).sum(1)) / (ni * (ni - 1))
    p_bar = float(p_i.mean())
    if np.isclose(pe, 1.0):
        return AgreementResult(float("nan"), p_bar, pe, n_units, n_ratings, CHANCE_ONE, method)
    if method == "per-item":
        kap = (p_bar - pe) / (1.0 - pe)
    elif method == "fleiss-cuzick":
        if t.shape[1] != 2:
            raise ValueError("fleiss-cuzick is defined for two categories")
        x = t[:, 1]
        pbar = x.sum() / ni.sum()
        nbar = ni.mean()
        kap = 1.0 - (x * (ni - x) / ni).sum() / (n_units * (nbar - 1.0) * pbar * (1.0 - pbar))
    else:
        raise ValueError(f"unknown method {method!r}")
    return AgreementResult(float(kap), p_bar, pe, n_units, n_ratings, None, method)


def fleiss_kappa_judgements(j: Judgements | LabelTable, method: str = "per-item") -> AgreementResult:
    """Fleiss' kappa over units judged by ≥ 2 annotators (first judgement of each annotator).

    See :func:`fleiss_kappa` for the formula; partial overlap (unequal raters per unit) is allowed.
    """
    return fleiss_kappa(_labels(j).counts(), method)


def krippendorff_alpha_nominal(value_counts) -> AgreementResult:
    """Krippendorff's alpha (nominal) from a units × values count table, via the coincidence matrix.

    Only pairable units (m_u ≥ 2 values) count. Coincidences
    ``o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1)``, ``n_c = Σ_k o_ck``, ``n = Σ_c n_c``;
    ``α = 1 − D_o/D_e = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k``.

    Returns:
        :class:`AgreementResult` (``observed`` = D_o = Σ_{c≠k} o_ck / n, ``expected`` =
        D_e = Σ_{c≠k} n_c n_k / (n(n − 1))); NaN with a reason when nothing is pairable or all values
        are equal (D_e = 0; the ``krippendorff`` package raises there).
    """
    t, mu = _rated_units(np.asarray(value_counts, dtype=np.float64))
    if not len(mu):
        return AgreementResult(float("nan"), float("nan"), float("nan"), 0, 0,
                               "no pairable unit (>= 2 values)", "krippendorff-nominal")
    w = t / (mu - 1.0)[:, None]
    o = w.T @ t - np.diag(w.sum(0))
    n_c = o.sum(1)
    n = n_c.sum()
    off_o = o.sum() - np.trace(o)
    off_e = n_c.sum() ** 2 - (n_c ** 2).sum()
    d_o = off_o / n
    d_e = off_e / (n * (n - 1.0))
    if off_e == 0:
        return AgreementResult(float("nan"), float(d_o), float(d_e), int(len(mu)), int(mu.sum()),
                               "all values identical: expected disagreement is 0", "krippendorff-nominal")
    alpha = 1.0 - (n - 1.0) * off_o / off_e
    return AgreementResult(float(alpha), float(d_o), float(d_e), int(len(mu)), int(mu.sum()), None,
                           "krippendorff-nominal")


def krippendorff_alpha_judgements(j: Judgements | LabelTable) -> AgreementResult:
    """Krippendorff's alpha (nominal) over units with ≥ 2 annotators (first judgement each)."""
    return krippendorff_alpha_nominal(_labels(j).counts())


def retest_agreement(j: Judgements) -> list[dict]:
    """Intra-annotator (test–retest) agreement: the same annotator on the same unit twice.

    For each annotator, units they judged ≥ 2 times contribute the first and second judgement
    (chronological). Reported: ``n_repeated`` units, ``agreement`` (share of identical choices),
    ``kappa``: the symmetric chance-corrected figure ``2·agreement − 1`` (Bennett–Alpert–Goldstein S =
    Brennan–Prediger κ = PABAK for two occasions; chance ½ because which candidate is called "a" is
    arbitrary, so it does not move when the pair's orientation changes), and ``kappa_oriented``: Cohen's κ
    between occasion 1 and 2 on "b won" in canonical order (depends on that order; kept for comparison).
    NaN + ``reason`` when undefined.

    Returns:
        One dict per annotator index ``0..m−1`` (``n_repeated = 0`` → agreement/kappa NaN).
    """
    m = j.n_annotators
    out = []
    if len(j):
        order = j.order()
        unit = j.unit[order]
        ann = j.annotator[order]
        win = j.winner_is_b[order]
        code = unit * m + ann
        srt = np.argsort(code, kind="stable")  # stable: keeps chronological order within a code
        cs = code[srt]
        start = np.ones(len(cs), bool)
        start[1:] = cs[1:] != cs[:-1]
        has2 = np.zeros(len(cs), bool)
        has2[:-1] = start[:-1] & ~start[1:]
        first = srt[has2]
        second = srt[np.flatnonzero(has2) + 1]
    for k in range(m):
        if len(j):
            sel = ann[first] == k
            x, y = win[first][sel], win[second][sel]
        else:
            x = y = np.zeros(0, np.int8)
        if len(x) == 0:
            out.append({"annotator": k, "n_repeated": 0, "agreement": float("nan"),
                        "kappa": float("nan"), "reason": "no repeated unit"})
            continue
        r = cohen_kappa(x, y, categories=[0, 1])
        same = float((x == y).mean())
        out.append({"annotator": k, "n_repeated": int(len(x)), "agreement": same, "kappa": 2.0 * same - 1.0,
                    "kappa_oriented": r.value, "reason": None, "reason_oriented": r.reason})
    return out


def spearman(x, y) -> float:
    """Spearman's rho on the positions where both are finite; NaN if < 3 positions or a constant vector
    (the rho of :func:`core.numeric.spearman`, the project's one implementation)."""
    return _spearman(x, y).rho


def split_half_reliability(j: Judgements, n_splits: int = 20, seed: int = 0, by: str = "auto",
                           score: str = "win_share", alpha: float = 0.01) -> list[dict]:
    """Ranking-level reliability: Spearman between the scores of two random halves, per batch.

    Each split assigns annotators (``by="annotator"``) or single judgements (``by="judgement"``)
    at random to two halves; each half's candidate scores are computed (``score="win_share"``:
    wins/comparisons, or ``"bt"``: Bradley–Terry via choix) and rank-correlated. Reported per batch:
    mean ``rho`` over splits and the Spearman–Brown full-length value ``rho_sb = 2ρ/(1 + ρ)``.
    ``by="auto"`` splits by annotator when the batch has ≥ 2 annotators, else by judgement.

    Kappa is low by construction on near-ties (the notes measured κ ≈ 0.25 with ranking ρ 0.996);
    show this beside it.

    Returns:
        One dict per batch: ``batch, by, n_splits, rho, rho_sd, rho_sb`` (NaN when undefined).
    """
    from .scores import bradley_terry  # local import: scores imports nothing from here

    rng = np.random.default_rng(seed)
    n = j.n_items
    out = []
    for bt, idx in sorted(j.batch_slices().items()):
        ann = j.annotator[idx]
        win = j.winner[idx]
        los = j.loser[idx]
        uniq = np.unique(ann)
        mode = by if by != "auto" else ("annotator" if len(uniq) >= 2 else "judgement")
        rhos = []
        for _ in range(n_splits):
            if mode == "annotator":
                perm = rng.permutation(uniq)
                half = np.isin(ann, perm[: len(uniq) // 2])
            else:
                half = rng.random(len(idx)) < 0.5
            sc = []
            for h in (half, ~half):
                if score == "bt":
                    c = np.bincount(win[h] * n + los[h], minlength=n * n).reshape(n, n).astype(float)
                    s = bradley_terry(c, alpha=alpha).strengths
                    present = (c.sum(0) + c.sum(1)) > 0
                    s = np.where(present, s, np.nan)
                else:
                    w = np.bincount(win[h], minlength=n).astype(float)
                    cmp_ = w + np.bincount(los[h], minlength=n)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        s = np.where(cmp_ > 0, w / cmp_, np.nan)
                sc.append(s)
            rhos.append(spearman(sc[0], sc[1]))
        r = np.array(rhos, float)
        rho = float(np.nanmean(r)) if np.isfinite(r).any() else float("nan")
        out.append({"batch": bt, "by": mode, "n_splits": n_splits, "rho": rho,
                    "rho_sd": float(np.nanstd(r)) if np.isfinite(r).any() else float("nan"),
                    "rho_sb": 2 * rho / (1 + rho) if np.isfinite(rho) and rho > -1 else float("nan")})
    return out



# ---------------------------------------------------------------- orientation-invariant agreement
# Orientation-invariant agreement statistics by report key, in report order: each takes a LabelTable
# (or Judgements, or a U × 2 count table) and returns an AgreementResult. `orientation_invariant_agreement`
# reports every one, so the analytics job, the agreement export and the dashboard's data get a new one by
# registration alone (docs/ARCHITECTURE.md, "How to add an agreement statistic").
AGREEMENT_STATISTICS: Registry[Callable[..., AgreementResult]] = Registry("agreement statistic")


def agreement_statistic(name: str):
    """Register ``fn(table) -> AgreementResult`` under the report key ``name`` (a repeated key is refused)."""
    def register(fn):
        if name == "cohen_symmetric":  # reported after the registered ones, by orientation_invariant_agreement
            raise ValueError(f"agreement statistic {name!r} is already registered")
        return AGREEMENT_STATISTICS.add(name, fn)
    return register


SYMMETRIC_CHANCE = 0.5  # each of the two candidates chosen with probability ½: no orientation enters


def _rated_units(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of a units × values count table with ≥ 2 ratings, and their rating counts."""
    ni = t.sum(1)
    keep = ni >= 2
    return t[keep], ni[keep]


def _binary_counts(j) -> np.ndarray:
    t = np.asarray(j.counts() if isinstance(j, LabelTable) else
                   (label_table(j).counts() if isinstance(j, Judgements) else j), dtype=np.float64)
    if t.ndim != 2 or t.shape[1] != 2:
        raise ValueError("need a units × 2 table (choices of candidate a, of candidate b)")
    return t


@agreement_statistic("fleiss_symmetric")
def fleiss_kappa_symmetric(j: Judgements | LabelTable | np.ndarray) -> AgreementResult:
    """Fleiss' kappa with a chance term symmetric in the two candidates (orientation-invariant).

    Observed agreement is Fleiss' ``P̄`` (mean over units with ≥ 2 ratings of the agreeing rater
    pairs among the unit's raters), which does not depend on which candidate is called "a". The
    classic ``P̄_e = p_a² + p_b²`` does: it uses the share of "a won" under one orientation rule.
    Averaging the marginals over both orientations of every unit gives ``p_a = p_b = ½``, so
    ``P̄_e = ½`` and ``κ_sym = (P̄ − ½)/(1 − ½) = 2P̄ − 1``. Equivalently, Fleiss' κ of the table in
    which every unit appears once in each orientation.

    Args:
        j: judgements, a :class:`LabelTable`, or a units × 2 count table.

    Returns:
        :class:`AgreementResult` (``expected`` = 0.5); NaN with a reason when no unit has ≥ 2 ratings.
    """
    t, ni = _rated_units(_binary_counts(j))
    if not len(ni):
        return AgreementResult(float("nan"), float("nan"), SYMMETRIC_CHANCE, 0, 0,
                               "no unit rated by >= 2 raters", "fleiss-symmetric")
    p_bar = float((((t * (t - 1)).sum(1)) / (ni * (ni - 1))).mean())
    return AgreementResult(2.0 * p_bar - 1.0, p_bar, SYMMETRIC_CHANCE, int(len(ni)), int(ni.sum()), None,
                           "fleiss-symmetric")


@agreement_statistic("kendall_u")
def kendall_u(j: Judgements | LabelTable | np.ndarray) -> AgreementResult:
    """Kendall & Babington Smith's (1940) coefficient of agreement u for paired comparisons.

    With m judges all judging the same pairs, ``Σ = Σ_{i≠j} C(a_ij, 2)`` (a_ij = judges preferring
    i to j) and ``u = 2Σ / (C(m, 2) C(n, 2)) − 1``: twice the share of agreeing judge pairs, minus 1.
    ``u = 1`` when all judges agree on every pair; its minimum is ``−1/(m − 1)`` (m even) or ``−1/m``
    (m odd). For partial overlap the same form is pooled over units: agreeing rater pairs over all
    rater pairs, each unit with its own n_u raters (units with < 2 raters dropped). With equal rater
    counts it equals :func:`fleiss_kappa_symmetric`; with unequal counts u weights units by their
    rater pairs C(n_u, 2), κ_sym weights them equally. Orientation-invariant by construction.

    Returns:
        :class:`AgreementResult` (``observed`` = share of agreeing rater pairs, ``expected`` = 0.5).
    """
    t, ni = _rated_units(_binary_counts(j))
    pairs = float((ni * (ni - 1) / 2).sum())
    if pairs == 0:
        return AgreementResult(float("nan"), float("nan"), SYMMETRIC_CHANCE, 0, 0,
                               "no unit rated by >= 2 raters", "kendall-u")
    agree = float((t * (t - 1) / 2).sum())
    share = agree / pairs
    return AgreementResult(2.0 * share - 1.0, share, SYMMETRIC_CHANCE, int(len(ni)), int(ni.sum()), None,
                           "kendall-u")


@agreement_statistic("krippendorff_symmetric")
def krippendorff_alpha_symmetric(j: Judgements | LabelTable | np.ndarray) -> AgreementResult:
    """Krippendorff's alpha (nominal) on the coincidence matrix averaged over both orientations.

    The observed coincidences ``o_ab + o_ba`` (disagreements) do not depend on orientation; the
    value totals ``n_a, n_b`` do. Averaging over both orientations of every unit gives
    ``n_a = n_b = n/2``, so ``D_e = 2 (n/2)² / (n(n − 1)) = n / (2(n − 1))`` and
    ``α_sym = 1 − D_o / D_e``.

    Returns:
        :class:`AgreementResult` (``observed`` = D_o, ``expected`` = D_e); NaN when nothing is pairable.
    """
    t, mu = _rated_units(_binary_counts(j))
    if not len(mu):
        return AgreementResult(float("nan"), float("nan"), float("nan"), 0, 0,
                               "no pairable unit (>= 2 values)", "krippendorff-symmetric")
    n = float(mu.sum())
    off_o = float((2.0 * t[:, 0] * t[:, 1] / (mu - 1.0)).sum())
    d_o = off_o / n
    d_e = n / (2.0 * (n - 1.0))
    return AgreementResult(1.0 - d_o / d_e, d_o, d_e, int(len(mu)), int(n), None, "krippendorff-symmetric")


def cohen_kappa_symmetric_matrix(j: Judgements | LabelTable) -> KappaMatrix:
    """Cohen-type kappa for every annotator pair with the symmetric chance term ``p_e = ½``.

    ``κ_sym = (p_o − ½)/(1 − ½) = 2p_o − 1`` on the units both judged (first judgements): the
    share of units where both chose the same candidate, rescaled; invariant to orientation. For two
    raters it equals :func:`kendall_u` and :func:`fleiss_kappa_symmetric` on their shared units.
    """
    lab = _labels(j).labels
    m = lab.shape[1]
    seen = (lab >= 0).astype(np.float64)
    x1 = (lab == 1).astype(np.float64)
    x0 = (lab == 0).astype(np.float64)
    n = seen.T @ seen
    same = x1.T @ x1 + x0.T @ x0
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(n > 0, 2.0 * same / np.where(n > 0, n, 1.0) - 1.0, np.nan)
    np.fill_diagonal(kappa, np.nan)
    reasons = {(i, k): NO_SHARED for i in range(m) for k in range(i + 1, m) if n[i, k] == 0}
    vals = kappa[np.triu_indices(m, 1)]
    mean = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    return KappaMatrix(kappa, n.round().astype(np.int64), mean, reasons)


def orientation_invariant_agreement(j: Judgements | LabelTable) -> dict:
    """The orientation-invariant figures in one dict (JSON-ready after NaN cleaning).

    Returns:
        every registered statistic (:data:`AGREEMENT_STATISTICS`: ``"fleiss_symmetric"``, ``"kendall_u"``,
        ``"krippendorff_symmetric"`` and any added) as :meth:`AgreementResult.as_dict`, plus ``"cohen_symmetric"`` (``kappa``, ``n_shared``, ``mean``).
    """
    table = _labels(j)
    cs = cohen_kappa_symmetric_matrix(table)
    figures = {name: statistic(table).as_dict() for name, statistic in AGREEMENT_STATISTICS.items()}
    figures["cohen_symmetric"] = {"kappa": cs.kappa, "n_shared": cs.n_shared, "mean": cs.mean}
    return figures
