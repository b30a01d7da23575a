"""Method adapters: anything that ranks sources for queries (retrieval) or scores query/source pairs
(classification, reranking). The evaluation only calls the small protocols below.

Retrieval method::

    method.name, method.params, method.supervised (bool)
    method.fit(source_ids, source_texts, train=None)      # train: TrainData of the other folds (supervised)
    method.search(query_ids, query_texts, k) -> (indices (nq,k) int, scores (nq,k) float), -1 = padding

Pair scorer::

    scorer.name, scorer.params, scorer.supervised
    scorer.fit(train)                                        # optional
    scorer.score_grid(query_ids, query_texts, source_ids, source_texts) -> (nq, ns, 3) scores for
        (none, cit., cf.), or (nq, ns) one reference score
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from detection.latin.lemmatize import LEMMATIZER_VERSION
from detection.methods import get_retriever


@dataclass
class TrainData:
    """What a supervised method may learn from: the links and texts of the training folds only."""

    query_ids: list[str]
    query_texts: list[str]
    source_ids: list[str]
    source_texts: list[str]
    links: list = field(default_factory=list)  # GoldLink of the training folds
    fold: int | None = None  # the held-out fold these data train for (a model stored per fold picks its own)


class EngineRetrieverMethod:
    """A retriever of the method registry (``detection.methods``) as a retrieval method.

    There is no other implementation to fall back to: an unknown name raises ``UnknownMethod``, bad parameters
    ``ParamError``, and a broken engine its own error.
    """

    supervised = False
    implementation = "detection.methods"

    def __init__(self, name: str, *, config=None, **params):
        """``config``: a ``MethodConfig`` already configured (a stored run's), built through the registry with the
        worker's build context (``BuildContext.default()``, as the detection job's) without validating it again;
        else ``params`` are configured here."""
        from detection.methods import registry

        self.name = name
        self.params = dict(config.params) if config is not None else dict(params)
        self._r = registry.build_config(config, registry.BuildContext.default()) if config is not None else \
            get_retriever(name, **params)
        # A retriever with ``tune(query_texts, relevant_source_indices)`` learns from the training folds (the
        # hybrid's fusion weight): it is then fitted per fold and tuned on the other folds' links only. One whose
        # model is stored per fold (a fine-tuned bi-encoder ``NAME/fold-<f>``) is fitted per fold with that fold's.
        per_fold = getattr(self._r, "use_fold", None)
        self._per_fold = callable(per_fold) and bool(getattr(self._r, "model_name", None)) and \
            self._stored_per_fold()
        self.supervised = callable(getattr(self._r, "tune", None)) or self._per_fold
        self.tunings: list[dict] = []

    def _stored_per_fold(self) -> bool:
        from detection.methods.infrastructure import model_store

        try:
            return model_store.local_path(f"{self._r.model_name}/fold-0") is not None
        except ValueError:
            return False

    @property
    def fold_models(self) -> bool:
        """True when the retriever's model is stored per fold: call :meth:`use_fold` before each fold's fit."""
        return self._per_fold

    def use_fold(self, fold: int, training_queries) -> None:
        """Use fold ``fold``'s stored model (refused when it trained on queries outside ``training_queries``)."""
        if self._per_fold:
            self._r.use_fold(fold, training_queries)

    def seen_queries(self) -> set[str]:
        """The query ids the retriever's model was trained on (a fine-tuned bi-encoder's card; empty for the
        others): an evaluation checks them against each fold's held-out queries."""
        return set(getattr(self._r, "training_queries", None) or ())

    def fit(self, source_ids, source_texts, train=None, progress=None):
        source_ids = list(source_ids)
        if train is not None and train.fold is not None:
            self.use_fold(train.fold, train.query_ids)
        self._r.fit(source_ids, list(source_texts), progress=progress)
        if train is not None and callable(getattr(self._r, "tune", None)):
            pos = {s: j for j, s in enumerate(source_ids)}
            rel: dict[str, set] = {q: set() for q in train.query_ids}
            for g in train.links:
                if g.source_id in pos and g.query_id in rel:
                    rel[g.query_id].add(pos[g.source_id])
            texts = dict(zip(train.query_ids, train.query_texts))
            self.tunings.append(self._r.tune([texts[q] for q in rel], [sorted(r) for r in rel.values()]))
        return self

    def search(self, query_ids, query_texts, k, progress=None):
        res = self._r.search(list(query_texts), int(k), progress=progress)
        return np.asarray(res.indices), np.asarray(res.scores)

    def search_signals(self, query_ids, query_texts, k, *, lines=None, line_index=None, progress=None):
        """(indices, scores, signals or None, their names): ``search`` with the first stage's per-candidate signals
        (``channels``: each channel's score), by ``pipeline.search_with_signals`` (see there for ``lines``)."""
        from detection.methods.rerank.pipeline import search_with_signals

        return search_with_signals(self._r, list(query_texts), int(k), lines=lines, line_index=line_index,
                                   progress=progress)

    def search_range(self, query_ids, query_texts, k, start, stop, progress=None):
        """``search`` of queries ``start..stop-1`` of the whole list (one shard), rows equal to its rows."""
        res = self._r.search_range(list(query_texts), int(k), int(start), int(stop), progress=progress)
        return np.asarray(res.indices), np.asarray(res.scores)

    @property
    def keeps_encodings(self) -> bool:
        """True when the retriever remembers what it encoded (a bi-encoder): refitting this same object on the
        fold pools and the pool again (an evaluation's pairwise and rerank sections) encodes nothing twice."""
        return isinstance(getattr(self._r, "encoded", None), dict)

    def encoded(self) -> dict | None:
        """How many passages and queries the retriever ran through its model (None if it keeps no count)."""
        return dict(self._r.encoded) if self.keeps_encodings else None

    def index_arrays(self) -> dict | None:
        """The fitted pool index as arrays (``detection.methods.infrastructure.index_files``); None for a supervised method
        (fitted per fold) or a retriever without a saved form."""
        if self.supervised or not callable(getattr(self._r, "index_arrays", None)):
            return None
        return self._r.index_arrays()

    def use_index_arrays(self, arrays: dict) -> None:
        """Become the method fitted on the pool whose arrays these are (``detection.methods.infrastructure.index_cache``)."""
        self._r.use_index_arrays(arrays)

    def describe(self) -> dict:
        out = {"name": self.name, "params": self.params, "implementation": self.implementation,
               "lemmatizer": LEMMATIZER_VERSION}
        if hasattr(self._r, "describe"):
            out["retriever"] = self._r.describe()
        if self.tunings:
            out["tuning_per_fold"] = self.tunings
        return out


class RankingFunctionMethod:
    """Wraps ``fn(query_ids, query_texts, source_ids, source_texts, k) -> (indices, scores)``, e.g. an external
    system's precomputed rankings or a synthetic ranking in tests."""

    supervised = False

    def __init__(self, name: str, fn, **params):
        self.name, self.fn, self.params = name, fn, params
        self.implementation = "function"

    def fit(self, source_ids, source_texts, train=None, progress=None):
        self.source_ids, self.source_texts = list(source_ids), list(source_texts)
        return self

    def search(self, query_ids, query_texts, k, progress=None):
        return self.fn(list(query_ids), list(query_texts), self.source_ids, self.source_texts, int(k))

    def describe(self) -> dict:
        return {"name": self.name, "params": self.params, "implementation": self.implementation}


def ranking_to_grid(indices: np.ndarray, scores: np.ndarray, n_sources: int, fill: float = 0.0) -> np.ndarray:
    """Scatter top-k results into a dense (nq, ns) score grid (unretrieved pairs get ``fill``)."""
    nq = indices.shape[0]
    grid = np.full((nq, n_sources), fill, np.float64)
    rows = np.repeat(np.arange(nq), indices.shape[1]).reshape(indices.shape)
    ok = indices >= 0
    grid[rows[ok], indices[ok]] = scores[ok]
    return grid


class LexicalRuleScorer:
    """A parameter-free lexical pair scorer: the similarity of a retriever (default ``tfidf-lemma`` cosine)
    over the whole grid, typed by the §3.3 rule: score goes to ``cit.`` where the rule fires, to ``cf.``
    elsewhere. A lexical reference point for the classification/rerank protocol, not a learned model."""

    supervised = False

    def __init__(self, retriever: str = "tfidf-lemma", **params):
        self.name = f"lexical-rule[{retriever}]"
        self.retriever = retriever
        self.params = {"retriever": retriever, **params}
        self._kw = params

    def fit(self, train=None):
        return self

    def score_grid(self, query_ids, query_texts, source_ids, source_texts):
        from detection.latin import overlap as lexical
        m = EngineRetrieverMethod(self.retriever, **self._kw)
        m.fit(source_ids, source_texts)
        idx, sc = m.search(query_ids, query_texts, len(source_ids))
        grid = ranking_to_grid(idx, np.nan_to_num(sc, neginf=0.0), len(source_ids))
        rule = lexical.rule_grid(lexical.analyse_many(query_texts), lexical.analyse_many(source_texts))
        out = np.zeros(grid.shape + (3,), np.float64)
        out[..., 1] = np.where(rule, grid, 0.0)
        out[..., 2] = np.where(rule, 0.0, grid)
        out[..., 0] = 1.0 - grid.clip(0, 1)
        return out

    def describe(self) -> dict:
        return {"name": self.name, "params": self.params}
