"""Transformer encoders as retrievers: sentence-transformers bi-encoders and token-level late interaction.

- :class:`BiEncoderRetriever`: any sentence-transformers model (a name in the models directory or a hub id),
  segments embedded in batches (optional E5-style ``query: `` / ``passage: `` prefixes), unit-normalised,
  exact top-k by :mod:`detection.methods.semantic.dense`. A bi-encoder fine-tuned by a training job
  (:mod:`detection.methods.rerank.bi_encoder`, stored as ``NAME/fold-<f>``) loads by that name and brings its
  own prefixes (its model card's); named ``NAME`` alone, an evaluation picks each fold's model through
  :meth:`BiEncoderRetriever.use_fold` and refuses one that trained on queries outside that fold's training folds.
- :class:`TokenMaxSimRetriever`: any ``transformers`` encoder; contextual token vectors of each segment (special
  tokens and padding left out, unit-normalised, stored float16 in one flat array with offsets).
  ``aggregate="mean"``: their mean per segment (token-level retrieval, Gong et al. 2025); ``"maxsim"``:
  ColBERT-style late interaction, score(q, d) = mean over query tokens of the best cosine with a token of d,
  computed for the top ``depth`` candidates of the mean-pooled first stage.

Device: ``auto`` = CUDA when present (else CPU, logged by :func:`detection.methods.infrastructure.device.resolve_device`);
``fp16`` on a GPU. A batch that runs out of memory is halved and retried down to one segment, then a
MemoryError says so. Embeddings of the source side are cached on disk per (model, version, texts) when a
``cache_dir`` is given, and reused across runs. Torch and transformers are imported inside these classes only.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..infrastructure import model_store
from ..infrastructure.device import resolve_device
from ..rerank.neural import PRETRAINED_KIND
from ..retriever import Progress, Retriever, TopK
from . import dense

log = logging.getLogger(__name__)
CACHE_VERSION = 1


class EncoderError(ValueError):
    """A model of the wrong kind, or a tokenizer that does not fit its model."""


def _resolve(name: str | None, what: str) -> str:
    if not name:
        raise model_store.ModelUnavailable(f"the {what} needs model=<a name in the models directory or a hub id>")
    path = model_store.resolve(name)  # ModelUnavailable at once when neither local nor reachable
    manifest = Path(path) / "manifest.json"
    if manifest.is_file():
        try:
            kind = json.loads(manifest.read_text(encoding="utf-8")).get("kind")
        except ValueError:
            kind = None
        if kind == "word-vectors":
            raise EncoderError(f"model {name!r} holds word vectors, not a transformer encoder: use it with "
                               f"'static-dense' or 'hybrid'")
    return path


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


def run_batches(fn: Callable[[list], list], items: Sequence, batch_size: int, progress: Progress | None = None,
                label: str = "embedded") -> list:
    """``fn`` over ``items`` in batches; on out-of-memory the batch size is halved and the batch retried."""
    out: list = []
    i, bs, n = 0, max(1, int(batch_size)), len(items)
    while i < n:
        batch = list(items[i:i + bs])
        try:
            out.extend(fn(batch))
        except (RuntimeError, MemoryError) as exc:
            if not _is_oom(exc):
                raise
            _empty_cuda_cache()
            if bs == 1:
                raise MemoryError(f"out of memory on a batch of one segment ({exc})") from exc
            bs = max(1, bs // 2)
            log.warning("out of memory: batch size halved to %d", bs)
            continue
        i += len(batch)
        if progress:
            progress(i / n, f"{label} {i}/{n} segments (batch {bs})")
    return out


def _empty_cuda_cache() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


def cache_file(cache_dir, model: str, config: dict, texts: Sequence[str]) -> Path | None:
    """Where the embeddings of ``texts`` by ``model`` with ``config`` are cached (None: no cache)."""
    if cache_dir is None:
        return None
    h = hashlib.sha256()
    h.update(json.dumps({"model": model, "config": config, "v": CACHE_VERSION}, sort_keys=True).encode())
    for t in texts:
        h.update(t.encode("utf-8", "replace") + b"\0")
    return Path(cache_dir) / "embeddings" / f"{h.hexdigest()[:32]}.npy"


def _cached(path: Path | None, compute: Callable[[], np.ndarray]) -> np.ndarray:
    if path is not None and path.is_file():
        return np.load(path, allow_pickle=False)
    arr = compute()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, arr, allow_pickle=False)
        tmp.replace(path)
    return arr


def _versions() -> dict:
    """Library versions a run depends on (recorded in its report)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("torch", "transformers", "sentence-transformers"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


class BiEncoderRetriever(Retriever):
    """sentence-transformers bi-encoder, exact cosine top-k."""

    name = "dense-encoder"

    def __init__(self, model: str | None = None, batch_size: int = 64, device: str = "auto", backend: str = "auto",
                 query_prefix: str | None = None, passage_prefix: str | None = None, fp16: bool = True,
                 cache_dir=None, progress_every: int | None = None):
        self.model_name, self.batch_size, self.backend = model, int(batch_size), backend
        self._prefix_args = (query_prefix, passage_prefix)
        self.fp16 = bool(fp16)
        self.device_arg, self.cache_dir = device, cache_dir
        self.active_model = model  # NAME/fold-<f> once an evaluation picked a fold's model
        self._model = None
        self._info = None
        # Every text this object encoded, per (model, prefix, fp16): an evaluation fits the same object on the
        # pool, the fold pools and the pool again (retrieval, pairwise, rerank) and encodes each text once.
        self._memo: dict[tuple, dict[str, np.ndarray]] = {}
        self.encoded = {"passages": 0, "queries": 0}  # texts actually run through the model

    # ------------------------------------------------------------------ which model: a name, a trained one, a fold
    def _fold_dirs(self, path: Path) -> list[str]:
        if not path.is_dir() or (path / "modules.json").is_file() or (path / "config.json").is_file():
            return []
        return sorted(d.name for d in path.iterdir() if d.is_dir() and (d.name.startswith("fold-") or d.name == "all"))

    def _path_and_card(self) -> tuple[str, dict]:
        """The resolved model and its training card (empty for a model that was not trained here)."""
        if self._info is None:
            from ..rerank.neural import TrainingFailed, read_card

            name = self.active_model
            path = _resolve(name, "dense-encoder")
            folder = Path(path)
            folds = self._fold_dirs(folder)
            if folds:
                raise EncoderError(f"model {name!r} holds one bi-encoder per fold: name one "
                                   f"({', '.join(f'{name}/{f}' for f in folds)}), or evaluate it per fold")
            try:
                card = read_card(folder) if folder.is_dir() else {}
            except TrainingFailed as exc:
                raise EncoderError(str(exc)) from None
            if card.get("kind") not in (None, "bi-encoder", PRETRAINED_KIND):  # a pretrained encoder: mean pooling
                raise EncoderError(f"model {name!r} is a {card.get('kind')}, not a bi-encoder: use it as a reranker")
            self._info = (path, card)
        return self._info

    def _prefix(self, side: int) -> str:
        """The prefix given, else a trained bi-encoder's own ("Query: " / "Candidate: "), else none."""
        given = self._prefix_args[side]
        if given is not None:
            return given
        own = self._path_and_card()[1].get("prefixes") or ["", ""]
        return str(own[side])

    @property
    def query_prefix(self) -> str:
        return self._prefix(0)

    @property
    def passage_prefix(self) -> str:
        return self._prefix(1)

    @property
    def training_queries(self) -> set[str]:
        """The query ids the active model was fine-tuned on (its model card's; empty for a model not trained here).
        An evaluation checks them against each fold's held-out queries."""
        return set(self._path_and_card()[1].get("training_queries") or ())

    def use_fold(self, fold: int, training_queries=()) -> bool:
        """Use ``<model>/fold-<fold>`` when the model is stored per fold (True), refusing a model whose training
        queries are not all among ``training_queries`` (the queries of the folds it may have seen)."""
        from ..rerank.neural import read_card

        root = model_store.local_path(self.model_name) if self.model_name else None
        if root is None or not self._fold_dirs(root):
            return False
        sub = f"{self.model_name}/fold-{int(fold)}"
        folder = model_store.local_path(sub)
        if folder is None:
            raise EncoderError(f"model {self.model_name!r} has no model for fold {fold} (it holds "
                               f"{', '.join(self._fold_dirs(root))})")
        seen = set(read_card(folder).get("training_queries") or ())
        leaked = seen - set(training_queries)
        if leaked:
            raise EncoderError(f"{sub} trained on {len(leaked)} queries outside fold {fold}'s training folds (e.g. "
                               f"{sorted(leaked)[0]!r}): it was trained on another split")
        if sub != self.active_model:
            self.active_model, self._model, self._info = sub, None, None
        return True

    def _load(self):
        if self._model is None:
            path = self._path_and_card()[0]
            from sentence_transformers import SentenceTransformer

            self.device = resolve_device(self.device_arg)
            try:
                self._model = SentenceTransformer(path, device=self.device)
            except Exception as exc:  # noqa: BLE001 - named, then re-raised
                raise model_store.ModelUnavailable(f"could not load sentence-transformers model "
                                                   f"{self.model_name!r}: {exc}") from exc
            if self.device.startswith("cuda") and self.fp16:
                self._model.half()
        return self._model

    def encode(self, texts: Sequence[str], prefix: str = "", progress: Progress | None = None) -> np.ndarray:
        model = self._load()
        texts = [prefix + t for t in texts]

        def batch(b):
            return list(model.encode(b, batch_size=len(b), convert_to_numpy=True, show_progress_bar=False))

        vecs = run_batches(batch, texts, self.batch_size, progress)
        dim_of = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = dim_of() or 0
        return _unit(np.asarray(vecs, np.float32).reshape(len(texts), -1) if vecs else np.zeros((0, dim)))

    def _vectors(self, texts: Sequence[str], prefix: str, side: str, progress: Progress | None = None) -> np.ndarray:
        """``encode(texts, prefix)`` through the memo: only texts this object has not encoded with the active
        model and prefix go through the model (each distinct one once, in order of first appearance)."""
        texts = list(texts)
        memo = self._memo.setdefault((self.active_model, prefix, self.fp16), {})
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing or not texts:
            vecs = self.encode(missing, prefix, progress)
            memo.update(zip(missing, vecs))
            self.encoded[side] += len(missing)
            if not texts:
                return vecs
        return np.stack([memo[t] for t in texts])

    def describe(self) -> dict:
        return {"model": self.active_model, "device": getattr(self, "device", None), "fp16": self.fp16,
                "query_prefix": self.query_prefix, "passage_prefix": self.passage_prefix, "versions": _versions()}

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None):
        self.source_ids = self._check_fit(source_ids, source_texts)
        config = {"kind": "bi-encoder", "prefix": self.passage_prefix, "fp16": self.fp16}
        path = cache_file(self.cache_dir, self.active_model or "", config, source_texts)
        self.S = _cached(path, lambda: self._vectors(source_texts, self.passage_prefix, "passages", progress))
        return self

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        Q = self._vectors(query_texts, self.query_prefix, "queries")
        idx, val = dense.search(Q, self.S, int(k), backend=self.backend, progress=progress)
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)


class TokenMaxSimRetriever(Retriever):
    """Contextual token vectors: mean-pooled retrieval or ColBERT-style MaxSim over a first-stage top-k."""

    name = "token-maxsim"

    def __init__(self, model: str | None = None, batch_size: int = 64, device: str = "auto", max_length: int = 128,
                 aggregate: str = "maxsim", layer: int = -1, depth: int = 1000, fp16: bool = True, cache_dir=None):
        if aggregate not in ("maxsim", "mean"):
            raise ValueError("aggregate must be 'maxsim' or 'mean'")
        self.model_name, self.batch_size, self.device_arg = model, int(batch_size), device
        self.max_length, self.aggregate, self.layer = int(max_length), aggregate, int(layer)
        self.depth, self.fp16, self.cache_dir = int(depth), bool(fp16), cache_dir
        self._model = None

    def _load(self):
        if self._model is not None:
            return
        path = _resolve(self.model_name, "token-maxsim")
        from transformers import AutoModel, AutoTokenizer

        self.device = resolve_device(self.device_arg)
        try:
            tok = AutoTokenizer.from_pretrained(path)
            model = AutoModel.from_pretrained(path)
        except Exception as exc:  # noqa: BLE001
            raise model_store.ModelUnavailable(f"could not load transformers model {self.model_name!r}: {exc}") from exc
        n_emb = model.get_input_embeddings().num_embeddings
        if len(tok) > n_emb:
            raise EncoderError(f"tokenizer of {self.model_name!r} has {len(tok)} tokens but the model embeds only "
                               f"{n_emb}: they do not belong together")
        model = model.to(self.device).eval()
        if self.device.startswith("cuda") and self.fp16:
            model = model.half()
        self._tok, self._model = tok, model
        # never feed more tokens than the model has positions for (or the tokenizer was made for)
        limits = [self.max_length, getattr(model.config, "max_position_embeddings", None),
                  getattr(tok, "model_max_length", None)]
        self.max_tokens = int(min(x for x in limits if isinstance(x, int) and 0 < x < 10**6))

    def token_vectors(self, texts: Sequence[str], progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(flat unit token vectors float16, offsets): segment i owns rows offsets[i]:offsets[i+1]."""
        import torch

        self._load()

        def batch(b):
            enc = self._tok(b, padding=True, truncation=True, max_length=self.max_tokens, return_tensors="pt",
                            return_special_tokens_mask=True)
            special = enc.pop("special_tokens_mask").bool()
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.no_grad():
                hidden = self._model(**enc, output_hidden_states=True).hidden_states[self.layer]
            keep = enc["attention_mask"].bool().cpu() & ~special
            h = hidden.float().cpu().numpy()
            return [_unit(h[i][keep[i].numpy()]).astype(np.float16) for i in range(len(b))]

        rows = run_batches(batch, list(texts), self.batch_size, progress, "encoded")
        dim = self._model.config.hidden_size
        lens = np.asarray([len(r) for r in rows], np.int64)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        flat = np.concatenate(rows) if rows and lens.sum() else np.zeros((0, dim), np.float16)
        return flat, offsets

    @staticmethod
    def _means(flat: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        out = np.zeros((len(offsets) - 1, flat.shape[1]), np.float32)
        lens = np.diff(offsets)
        nz = lens > 0
        if nz.any():
            sums = np.add.reduceat(flat.astype(np.float32), offsets[:-1][nz], axis=0)
            out[nz] = sums / lens[nz, None]
        return _unit(out)

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None):
        self.source_ids = self._check_fit(source_ids, source_texts)
        config = {"kind": "tokens", "layer": self.layer, "max_length": self.max_length, "fp16": self.fp16}
        path = cache_file(self.cache_dir, self.model_name or "", config, source_texts)
        offsets_path = None if path is None else path.with_name(path.stem + "-offsets.npy")
        if path is not None and path.is_file() and offsets_path.is_file():
            self.flat = np.load(path, allow_pickle=False)
            self.offsets = np.load(offsets_path, allow_pickle=False)
        else:
            self.flat, self.offsets = self.token_vectors(list(source_texts), progress)
            if path is not None:
                _cached(path, lambda: self.flat)
                _cached(offsets_path, lambda: self.offsets)
        self.S = self._means(self.flat, self.offsets)
        return self

    def describe(self) -> dict:
        return {"model": self.model_name, "device": getattr(self, "device", None), "fp16": self.fp16,
                "aggregate": self.aggregate, "layer": self.layer, "max_tokens": getattr(self, "max_tokens", None),
                "versions": _versions()}

    def maxsim(self, q: np.ndarray, cands: np.ndarray) -> np.ndarray:
        """Late-interaction score of one query's token vectors against candidate segments."""
        out = np.zeros(len(cands), np.float32)
        if not len(q):
            return out
        starts, ends = self.offsets[cands], self.offsets[cands + 1]
        lens = ends - starts
        rows = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)]) if lens.sum() else np.zeros(0, int)
        if not len(rows):
            return out
        sims = q.astype(np.float32) @ self.flat[rows].astype(np.float32).T
        local = np.concatenate([[0], np.cumsum(lens)[:-1]])
        nz = lens > 0
        best = np.maximum.reduceat(sims, local[nz], axis=1)
        out[nz] = best.mean(axis=0)
        return out

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        qflat, qoff = self.token_vectors(list(query_texts))
        Q = self._means(qflat, qoff)
        k = int(k)
        if self.aggregate == "mean":
            idx, val = dense.search(Q, self.S, k, progress=progress)
            return TopK(indices=idx, scores=val, source_ids=self.source_ids)
        depth = max(k, min(self.depth, len(self.source_ids)))
        cidx, _ = dense.exact_topk(Q, self.S, depth)
        idx = np.full((len(Q), k), -1, np.int32)
        val = np.full((len(Q), k), np.nan, np.float32)
        for i in range(len(Q)):
            cand = cidx[i][cidx[i] >= 0].astype(np.int64)
            s = self.maxsim(qflat[qoff[i]:qoff[i + 1]], cand)
            order = np.lexsort((cand, -s))[:k]
            idx[i, :len(order)], val[i, :len(order)] = cand[order], s[order]
            if progress and (i % 50 == 0 or i == len(Q) - 1):
                progress((i + 1) / len(Q), f"maxsim: {i + 1}/{len(Q)} queries")
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)
