"""The retriever interface (`Retriever`: fit on sources, search for queries) and its result (`TopK`)."""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

Progress = Callable[[float, str], None]


@dataclass
class TopK:
    """Top-k results for every query: compact arrays, not lists of tuples.

    ``indices[i, r]`` is the index (into ``source_ids``) of the r-th best source for query i, -1 for padding;
    ``scores[i, r]`` its score (``nan`` for padding). Rows are sorted by descending score, ties by index.
    """

    indices: np.ndarray  # int32 (nq, k)
    scores: np.ndarray  # float32 (nq, k)
    source_ids: Sequence[str]

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def ids(self, i: int) -> list[str]:
        return [self.source_ids[j] for j in self.indices[i] if j >= 0]

    def iter_rows(self, query_ids: Sequence[str]):
        """(query_id, source_id, rank, score) for every non-padding result, rank from 1."""
        for i, qid in enumerate(query_ids):
            for r, (j, s) in enumerate(zip(self.indices[i], self.scores[i]), 1):
                if j < 0:
                    break
                yield qid, self.source_ids[j], r, float(s)


class Retriever(abc.ABC):
    """Base class: ``fit(source_ids, source_texts)`` then ``search(query_texts, k) -> TopK``."""

    name = "base"

    @abc.abstractmethod
    def fit(self, source_ids: Sequence[str], source_texts: Sequence[str], *, progress: Progress | None = None):
        """Index the source segments; returns self."""

    @abc.abstractmethod
    def search(self, query_texts: Sequence[str], k: int, *, progress: Progress | None = None) -> TopK:
        """Top-k source indices and scores for every query."""

    def search_range(self, query_texts: Sequence[str], k: int, start: int, stop: int, *,
                     progress: Progress | None = None) -> TopK:
        """``search`` for queries start..stop-1 of the corpus ``query_texts`` (one shard of a sharded job).

        Rows equal those of ``search(query_texts)``: retrievers whose scores depend on statistics of the
        whole query corpus (``tesserae``: its stoplist and query-side frequencies) override this."""
        return self.search(list(query_texts[start:stop]), k, progress=progress)

    def _check_fit(self, source_ids, source_texts) -> list[str]:
        if len(source_ids) != len(source_texts):
            raise ValueError(f"{len(source_ids)} source ids but {len(source_texts)} texts")
        ids = [str(s) for s in source_ids]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate source ids")
        return ids
