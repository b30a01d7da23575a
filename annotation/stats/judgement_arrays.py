"""Array representation of pairwise-similarity judgements (pure numpy, no Django).

One judgement = one click: annotator ``k`` saw candidates ``a`` and ``b`` (item indices inside a
batch, canonical order ``a < b``) next to the batch's reference verse and chose the one more
similar to it. ``winner_is_b`` stores *which candidate won* in canonical order, never which
screen side was clicked (left/right is randomised per screen; agreement on "clicked left" is ~0).

A *unit* (the thing annotators agree or disagree on) is the triple ``(batch, a, b)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Judgements", "from_winner_ids"]


def _as1d(x, dtype) -> np.ndarray:
    arr = np.asarray(x, dtype=dtype)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    return arr


@dataclass(frozen=True)
class Judgements:
    """Pairwise judgements as parallel arrays (length ``N``).

    Attributes:
        annotator: int array, annotator index in ``[0, n_annotators)``.
        a: int array, first candidate index in ``[0, n_items)``; ``a < b`` (canonical order).
        b: int array, second candidate index, ``b > a``.
        winner_is_b: bool/int array, 1 if candidate ``b`` was judged more similar, 0 if ``a``.
        n_items: number of candidates per batch (items are indexed within a batch).
        batch: int array of batch indices (``None`` = a single batch 0).
        timestamp: optional float array (e.g. epoch seconds) used to order repeats; ``None`` =
            array order is the chronological order.
        n_annotators: number of annotators (default ``annotator.max() + 1``).
        n_batches: number of batches (default ``batch.max() + 1``).
        batch_items: optional int array (n_batches,): candidates in each batch when batches differ
            in size (``n_items`` is then the largest); default every batch has ``n_items``. Used where
            the size matters, e.g. whether a batch's tournament is complete.

    Treat the arrays as immutable: derived arrays (winner, loser, batch groups) are cached.

    Use :func:`from_winner_ids` to build from (candidate, candidate, winning candidate) rows in any
    order; it canonicalises to ``a < b``.
    """

    annotator: np.ndarray
    a: np.ndarray
    b: np.ndarray
    winner_is_b: np.ndarray
    n_items: int
    batch: np.ndarray | None = None
    timestamp: np.ndarray | None = None
    n_annotators: int | None = None
    n_batches: int | None = None
    batch_items: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ann = _as1d(self.annotator, np.int64)
        a = _as1d(self.a, np.int64)
        b = _as1d(self.b, np.int64)
        w = _as1d(self.winner_is_b, np.int8)
        n = len(ann)
        bt = np.zeros(n, np.int64) if self.batch is None else _as1d(self.batch, np.int64)
        ts = None if self.timestamp is None else _as1d(self.timestamp, np.float64)
        if not (len(a) == len(b) == len(w) == len(bt) == n) or (ts is not None and len(ts) != n):
            raise ValueError("all judgement arrays must have the same length")
        if n:
            if np.any(a >= b):
                raise ValueError("pairs must be canonical (a < b); use from_winner_ids()")
            if a.min() < 0 or b.max() >= self.n_items:
                raise ValueError("item index out of range [0, n_items)")
            if ann.min() < 0 or bt.min() < 0:
                raise ValueError("negative annotator or batch index")
            if not np.isin(w, (0, 1)).all():
                raise ValueError("winner_is_b must be 0 or 1")
        n_ann = self.n_annotators if self.n_annotators is not None else (int(ann.max()) + 1 if n else 0)
        n_bat = self.n_batches if self.n_batches is not None else (int(bt.max()) + 1 if n else 0)
        if n and (ann.max() >= n_ann or bt.max() >= n_bat):
            raise ValueError("annotator/batch index exceeds n_annotators/n_batches")
        sizes = None
        if self.batch_items is not None:
            sizes = _as1d(self.batch_items, np.int64)
            if len(sizes) != n_bat or (len(sizes) and (sizes.min() < 0 or sizes.max() > self.n_items)):
                raise ValueError("batch_items needs one size in [0, n_items] per batch")
            if n and np.any(b >= sizes[bt]):
                raise ValueError("item index out of range of its batch's size")
        object.__setattr__(self, "batch_items", sizes)
        for name, val in (("annotator", ann), ("a", a), ("b", b), ("winner_is_b", w), ("batch", bt),
                          ("timestamp", ts), ("n_annotators", n_ann), ("n_batches", n_bat)):
            object.__setattr__(self, name, val)

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return len(self.a)

    @property
    def winner(self) -> np.ndarray:
        """Index of the winning candidate (computed once, cached)."""
        if "winner" not in self._cache:
            self._cache["winner"] = np.where(self.winner_is_b == 1, self.b, self.a)
        return self._cache["winner"]

    @property
    def loser(self) -> np.ndarray:
        """Index of the losing candidate (computed once, cached)."""
        if "loser" not in self._cache:
            self._cache["loser"] = np.where(self.winner_is_b == 1, self.a, self.b)
        return self._cache["loser"]

    @property
    def pair_index(self) -> np.ndarray:
        """Pair code inside a batch: ``a * n_items + b``."""
        return self.a * self.n_items + self.b

    @property
    def unit(self) -> np.ndarray:
        """Global unit code ``(batch, a, b)`` → ``batch * n_items² + a * n_items + b``."""
        return self.batch * (self.n_items * self.n_items) + self.pair_index

    def order(self) -> np.ndarray:
        """Chronological order (stable): by timestamp if given, else array order."""
        if self.timestamp is None:
            return np.arange(len(self))
        return np.argsort(self.timestamp, kind="stable")

    def items_in_batch(self, batch: int) -> int:
        """Number of candidates of one batch (``batch_items`` if given, else ``n_items``)."""
        return self.n_items if self.batch_items is None else int(self.batch_items[batch])

    def subset(self, mask_or_index) -> "Judgements":
        """Judgements selected by a boolean mask or an index array (same n_items/annotators/batches)."""
        idx = mask_or_index
        return Judgements(
            annotator=self.annotator[idx], a=self.a[idx], b=self.b[idx], winner_is_b=self.winner_is_b[idx],
            n_items=self.n_items, batch=self.batch[idx],
            timestamp=None if self.timestamp is None else self.timestamp[idx],
            n_annotators=self.n_annotators, n_batches=self.n_batches, batch_items=self.batch_items,
        )

    def batch_slices(self) -> dict[int, np.ndarray]:
        """``{batch: indices}`` for the batches that have judgements (one stable argsort)."""
        if "batch_slices" not in self._cache:
            order = np.argsort(self.batch, kind="stable")
            sb = self.batch[order]
            cuts = np.flatnonzero(np.diff(sb)) + 1
            groups = np.split(order, cuts)
            self._cache["batch_slices"] = {int(self.batch[g[0]]): g for g in groups if len(g)}
        return self._cache["batch_slices"]

    def for_batch(self, batch: int) -> "Judgements":
        """The judgements of one batch (keeps ``n_batches``)."""
        idx = self.batch_slices().get(int(batch), np.zeros(0, np.int64))
        return self.subset(idx)

    def count_matrix(self, batch: int | None = None) -> np.ndarray:
        """Win-count matrix ``C`` (n_items × n_items, float): ``C[i, j]`` = times i beat j.

        Args:
            batch: restrict to one batch; ``None`` pools all judgements (only meaningful for one batch).
        """
        j = self if batch is None else self.for_batch(batch)
        n = self.n_items
        code = j.winner * n + j.loser
        return np.bincount(code, minlength=n * n).astype(np.float64).reshape(n, n)


def from_winner_ids(annotator, left, right, winner, n_items: int, batch=None, timestamp=None,
                    n_annotators: int | None = None, n_batches: int | None = None,
                    batch_items=None) -> Judgements:
    """Build canonical :class:`Judgements` from screen-order rows.

    Args:
        annotator: annotator index per judgement.
        left, right: candidate indices as shown (any order, must differ).
        winner: the chosen candidate's index (must equal ``left`` or ``right``).
        n_items, batch, timestamp, n_annotators, n_batches, batch_items: see :class:`Judgements`.

    Returns:
        Judgements with ``a = min(left, right)``, ``b = max(left, right)``,
        ``winner_is_b = (winner == b)`` — i.e. agreement is on *which candidate won*.
    """
    left = _as1d(left, np.int64)
    right = _as1d(right, np.int64)
    winner = _as1d(winner, np.int64)
    if np.any(left == right):
        raise ValueError("a candidate cannot be compared with itself")
    if np.any((winner != left) & (winner != right)):
        raise ValueError("winner must be one of the two shown candidates")
    a = np.minimum(left, right)
    b = np.maximum(left, right)
    return Judgements(annotator, a, b, (winner == b).astype(np.int8), n_items, batch, timestamp,
                      n_annotators, n_batches, batch_items)
