"""DBBE pilots (Swaelens et al. §5.4, Tables 8–9): detect verse variants and types by thresholding similarity.

- Verse level: all pairs of verses that carry a verse-variant group (``idgroup``); a pair is positive when both
  verses are in the same group. Verses without a group are left out of the pairs (48 of 1,388 in the sample).
- Type level: all pairs of occurrences (``idoriginal_poem``); positive when both have the same ``type_id``.
  Occurrence similarity from its verses: for occurrences X and Y, each verse of X takes its best match among
  Y's verses and these are averaged (X→Y); the occurrence score is the mean of X→Y and Y→X (symmetric
  mean of best matches). Every verse of an occurrence is used, with or without a group.
- A pair is predicted similar when its score is ≥ the threshold. Asymmetric methods are symmetrised as the
  mean of both directions. Precision is 0 when nothing is predicted (F1 then 0).
"""
from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

DEFAULT_THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.05), 2)

# The paper's figures (semantic edit distance on its own DBBE data), for side-by-side tables.
PAPER_BEST = {"verse": {"threshold": 0.6, "precision": 0.948479, "recall": 0.873819, "f1": 0.909619},
              "type": {"threshold": 0.6, "precision": 0.840879, "recall": 0.766183, "f1": 0.801795}}
PAPER_F1 = {
    "verse": [0.253157, 0.253157, 0.253324, 0.254216, 0.256543, 0.265695, 0.284785, 0.331735, 0.414451, 0.603588,
              0.846265, 0.909619, 0.883077, 0.815348, 0.716491, 0.58338, 0.423951, 0.280298, 0.140897],
    "type": [0.148313, 0.154183, 0.167615, 0.192836, 0.236741, 0.299636, 0.40178, 0.475727, 0.530505, 0.677079,
             0.776116, 0.801795, 0.795863, 0.77132, 0.73745, 0.68643, 0.622717, 0.526442, 0.370259],
}


@dataclass(frozen=True)
class PilotVerse:
    verse_id: str
    type_id: str
    occurrence_id: str
    group_id: str | None
    text: str
    order: int | None


@dataclass(frozen=True)
class SweepRow:
    threshold: float
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int


@dataclass
class SweepResult:
    level: str
    rows: list[SweepRow]
    best: SweepRow
    n_pairs: int
    n_positive: int
    n_items: int
    method: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"level": self.level, "method": self.method, "n_items": self.n_items, "n_pairs": self.n_pairs,
                "n_positive": self.n_positive, "best": asdict(self.best), "rows": [asdict(r) for r in self.rows],
                "paper_best": PAPER_BEST.get(self.level)}


def read_verses_csv(path: str | Path) -> list[PilotVerse]:
    """``dbbe_verses_sample.csv``: columns type_id, id, idoriginal_poem, idgroup, verse, order (others ignored)."""
    out = []
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        need = {"type_id", "id", "idoriginal_poem", "idgroup", "verse"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}:1: missing columns {sorted(missing)}")
        for lineno, row in enumerate(reader, start=2):
            group = row["idgroup"].strip()
            if group.endswith(".0"):
                group = group[:-2]
            text = row["verse"]
            raw_order = (row.get("order") or "").strip()
            try:
                order = int(float(raw_order)) if raw_order else None
            except ValueError:
                # A few upstream rows have an unquoted comma in the verse, which pushes the verse's tail
                # into the following columns: keep the tail with the verse, the order is then unknown.
                text, order = f"{text},{row.get('order')}", None
            if not row["type_id"].strip() or not row["idoriginal_poem"].strip():
                raise ValueError(f"{path}:{lineno}: empty type_id or idoriginal_poem")
            out.append(PilotVerse(row["id"].strip(), row["type_id"].strip(), row["idoriginal_poem"].strip(),
                                  group or None, text, order))
    return out


def sweep_scores(scores: np.ndarray, labels: np.ndarray, thresholds: Sequence[float] = DEFAULT_THRESHOLDS) -> list[SweepRow]:
    """P/R/F1 of ``scores >= t`` against boolean ``labels`` for each threshold (counts via one sort)."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels, dtype=bool)
    order = np.argsort(scores, kind="stable")
    s_sorted = scores[order]
    pos_sorted = labels[order]
    # number of positives among scores < t = cumulative positives up to the insertion point
    cum_pos = np.concatenate([[0], np.cumsum(pos_sorted)])
    n_pos = int(labels.sum())
    rows = []
    for t in thresholds:
        t = float(t)
        # small tolerance so that a score equal to the threshold up to float32 rounding counts as ≥ t
        k = int(np.searchsorted(s_sorted, t - 1e-6, side="left"))
        predicted = len(s_sorted) - k
        tp = n_pos - int(cum_pos[k])
        fp = predicted - tp
        fn = n_pos - tp
        p = tp / predicted if predicted else 0.0
        r = tp / n_pos if n_pos else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        rows.append(SweepRow(round(t, 4), p, r, f, tp, fp, fn))
    return rows


def best_row(rows: list[SweepRow]) -> SweepRow:
    """Highest F1; ties go to the lower threshold."""
    return max(rows, key=lambda r: (r.f1, -r.threshold))


def _symmetrise(S: np.ndarray, method) -> np.ndarray:
    if getattr(method, "symmetric", True):
        return S
    return (S + S.T) / 2.0


def occurrence_similarity(S: np.ndarray, occurrence_of_verse: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """(occurrences, matrix): symmetric mean of best-match verse similarities between occurrences."""
    occ = np.asarray(occurrence_of_verse, dtype=object)
    order = np.argsort(occ, kind="stable")
    occ_sorted = occ[order]
    starts = np.flatnonzero(np.r_[True, occ_sorted[1:] != occ_sorted[:-1]])
    counts = np.diff(np.r_[starts, len(occ_sorted)])
    Ss = S[np.ix_(order, order)]
    best = np.maximum.reduceat(Ss, starts, axis=1)              # verse × occurrence: best match in Y
    directed = np.add.reduceat(best, starts, axis=0) / counts[:, None]  # X → Y: mean over X's verses
    sym = (directed + directed.T) / 2.0
    return occ_sorted[starts].tolist(), sym


def _resolve_method(method):
    if isinstance(method, str):
        from detection.methods.greek.greek_registry import get_method

        return get_method(method)
    return method


def sweep(verses: Sequence[PilotVerse] | str | Path, level: str = "verse", method=None,
          thresholds: Sequence[float] = DEFAULT_THRESHOLDS, progress: Callable[[float, str], None] | None = None,
          fit_texts: Sequence[str] | None = None, similarity: np.ndarray | None = None) -> SweepResult:
    """Run one pilot. ``method``: a registry name or a method object (fitted on ``fit_texts`` when given,
    otherwise as it is; static embeddings then train on the compared verses). ``similarity``: a precomputed
    verse × verse matrix (in the order of ``verses``) instead of a method."""
    if level not in ("verse", "type"):
        raise ValueError("level must be 'verse' or 'type'")
    if isinstance(verses, (str, Path)):
        verses = read_verses_csv(verses)
    verses = list(verses)
    if similarity is None and method is None:
        raise ValueError("give a method or a similarity matrix")

    def report(f, msg):
        if progress:
            progress(f, msg)

    m = _resolve_method(method) if method is not None else None
    if m is not None and fit_texts is not None:
        report(0.0, "fitting method")
        m.fit(list(fit_texts))
    if level == "verse":
        items = [v for v in verses if v.group_id is not None]
    else:
        items = verses
    if similarity is None:
        texts = [v.text for v in items]

        def inner(f, msg):
            report(0.05 + 0.85 * f, msg)

        S = np.asarray(m.similarity_matrix(texts, texts, progress=inner), dtype=np.float64)
        S = _symmetrise(S, m)
    else:
        S = np.asarray(similarity, dtype=np.float64)
        if level == "verse":
            keep = [i for i, v in enumerate(verses) if v.group_id is not None]
            S = S[np.ix_(keep, keep)]
    report(0.9, "counting pairs")
    if level == "verse":
        groups = np.array([v.group_id for v in items], dtype=object)
        iu = np.triu_indices(len(items), k=1)
        scores = S[iu]
        labels = groups[iu[0]] == groups[iu[1]]
        n_items = len(items)
    else:
        occs, O = occurrence_similarity(S, [v.occurrence_id for v in items])
        type_of = {v.occurrence_id: v.type_id for v in items}
        types = np.array([type_of[o] for o in occs], dtype=object)
        iu = np.triu_indices(len(occs), k=1)
        scores = O[iu]
        labels = types[iu[0]] == types[iu[1]]
        n_items = len(occs)
    rows = sweep_scores(scores, labels, thresholds)
    report(1.0, "done")
    return SweepResult(level=level, rows=rows, best=best_row(rows), n_pairs=int(scores.size),
                       n_positive=int(labels.sum()), n_items=n_items,
                       method=m.describe() if m is not None and hasattr(m, "describe") else {})


def write_sweep_csv(rows: list[SweepRow], path: str | Path | None = None) -> str:
    """CSV with the columns ``threshold,precision,recall,f1``; returns the text, writes it when ``path``."""
    lines = ["threshold,precision,recall,f1"]
    for r in rows:
        lines.append(f"{r.threshold:.2f},{r.precision:.6f},{r.recall:.6f},{r.f1:.6f}")
    text = "\n".join(lines) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
