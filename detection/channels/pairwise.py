"""The multi-channel retriever (``channels``): every channel of :mod:`.channels` scores every pair, the candidates
of a query are the union of the channels' own top lists under one budget, ranked by one fused score.

Fused score = sum over the channels that are on of ``weight x channel score``. Channel scores are sums of
reference-corpus rarities (or cosines), never rescaled per query, so a whole run sorted by score is meaningful.

Candidates: the channels that are on share one budget (1,000 by default, or k when larger) round robin: rank 1 of
every channel's own list (score > 0), then rank 2 ..., until the budget holds that many sources (a source's
best rank in any channel; equal ranks: the lower source index), so a channel whose list runs out or repeats another's
leaves its share to the deep ones (sound, semantic); a short union is filled with the best fused scores of the
rest. The list is sorted by score (ties: the lower source index) and cut at k, so a top-100 is the first 100 of a
top-1000.

Default weights come from a profile per text type (``verse``, ``prose``; docs/verse_detection.md says how they
were chosen); a weight parameter left null takes the profile's value, 0 or the channel's switch off removes it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from detection.channels import channel_features as C
from detection.channels import fusion
from detection.channels.bulk_features import LazyFeatures, VariantIndex, source_index
from detection.methods.lexical.reference_loci import INDEX_NAME as REFERENCE_INDEX
from detection.methods.lexical.reference_loci import shipped_index
from detection.methods.lexical.sparse_kernel import score_block_dense, topk_positive
from detection.methods.retriever import Progress, Retriever, TopK
from detection.methods.specs import ParamError

PROFILES: dict[str, dict[str, float]] = {
    # chosen on the Lucan -> Virgil dev benchmark (docs/verse_detection.md), coarse steps, one weight at a time;
    # sound and semantic x1.5 with the round-robin budget, chosen on Lucan's books 2-5 only
    "verse": {"lemma": 0.5, "rare": 0.5, "form": 0.5, "quote": 1.0, "sound": 3.0, "edit": 0.3, "synonym": 0.3,
              "order": 0.5, "position": 0.5, "semantic": 1.5, "encoder": 1.0},
    # the earlier verse weights without verse position (prose has no lines to end); checked on Loci Similes
    "prose": {"lemma": 0.5, "rare": 0.5, "form": 0.5, "quote": 1.0, "sound": 2.0, "edit": 0.3, "synonym": 0.3,
              "order": 0.5, "position": 0.0, "semantic": 1.0, "encoder": 1.0},
}
# weight of the neighbouring line pairs' fused scores (a parallel over several lines); verse chosen on the Lucan
# benchmark (0.2: R@100 +0.8 point, 0.35: +1.5 points, 0.5: -0.4), prose not measured: off
CONTEXT = {"verse": 0.35, "prose": 0.0}
DEFAULT_VECTORS = "la-lemma-cbow100"
SIGNALS = C.SIGNALS
RARE_MIN = 7.0


class ChannelError(ParamError):
    """A combination of channel parameters that cannot run (names the parameter)."""


SHIPPED_VECTORS_DIR = Path(__file__).resolve().parents[3] / "data" / "vectors"


def _vectors_or_none(name: str | None):
    """The word vectors ``name`` from the models directory; the default vectors also from the copy shipped in
    ``data/vectors/`` (so the default runs on a fresh install)."""
    if not name:
        return None
    from detection.methods.infrastructure import model_store
    from detection.methods.semantic.word_vectors import load_folder, load_vectors

    try:
        return load_vectors(name, language="la")
    except model_store.ModelUnavailable:
        shipped = SHIPPED_VECTORS_DIR / name
        if name == DEFAULT_VECTORS and (shipped / "manifest.json").is_file():
            return _SHIPPED.setdefault(name, load_folder(shipped))
        raise


_SHIPPED: dict = {}


class MultiChannelRetriever(Retriever):
    name = "channels"
    signal_names = SIGNALS

    def __init__(self, profile: str = "verse", candidates: str = "union", vectors: str | None = DEFAULT_VECTORS,
                 synonyms: str | None = "vectors", rare_min: float = RARE_MIN, encoder: str | None = None,
                 lemma: bool = True, lemma_weight: float | None = None,
                 rare: bool = True, rare_weight: float | None = None,
                 form: bool = True, form_weight: float | None = None,
                 quote: bool = True, quote_weight: float | None = None,
                 sound: bool = True, sound_weight: float | None = None,
                 edit: bool = True, edit_weight: float | None = None,
                 synonym: bool = True, synonym_weight: float | None = None,
                 order: bool = True, order_weight: float | None = None,
                 position: bool = True, position_weight: float | None = None,
                 semantic: bool = True, semantic_weight: float | None = None,
                 encoder_weight: float | None = None, context_weight: float | None = None, budget: int = 1000,
                 cache_dir=None, block_size: int | None = None):
        if profile not in PROFILES:
            raise ChannelError(f"profile must be one of {', '.join(PROFILES)}", "profile")
        if candidates not in ("union", "fused"):
            raise ChannelError("candidates must be 'union' or 'fused'", "candidates")
        switches = {"lemma": lemma, "rare": rare, "form": form, "quote": quote, "sound": sound, "edit": edit,
                    "synonym": synonym, "order": order, "position": position, "semantic": semantic,
                    "encoder": encoder is not None}
        given = {"lemma": lemma_weight, "rare": rare_weight, "form": form_weight, "quote": quote_weight,
                 "sound": sound_weight, "edit": edit_weight, "synonym": synonym_weight, "order": order_weight,
                 "position": position_weight, "semantic": semantic_weight, "encoder": encoder_weight}
        self.weights = {}
        for ch in C.CHANNELS:
            w = PROFILES[profile][ch] if given[ch] is None else float(given[ch])
            if w < 0 or not np.isfinite(w):
                raise ChannelError(f"{ch}_weight must be a finite number >= 0, not {w}", f"{ch}_weight")
            if switches[ch] and w > 0:
                self.weights[ch] = w
        self.profile, self.candidates, self.rare_min = profile, candidates, float(rare_min)
        ctx = CONTEXT[profile] if context_weight is None else float(context_weight)
        if ctx < 0 or not np.isfinite(ctx):
            raise ChannelError(f"context_weight must be a finite number >= 0, not {ctx}", "context_weight")
        self.context_weight = ctx
        if isinstance(budget, bool) or int(budget) < 1:
            raise ChannelError("budget must be a positive integer", "budget")
        self.budget = int(budget)
        self.vectors_name, self.synonyms_name, self.encoder_name = vectors, synonyms, encoder
        self._wv = None
        self._synonym_relation = None
        if self._wv is None and vectors:  # rarity, synonyms and semantics all come from the vectors
            self._wv = _vectors_or_none(vectors)
        if "semantic" in self.weights and self._wv is None:
            raise ChannelError("the semantic channel needs word vectors: set 'vectors' or semantic=false", "vectors")
        if "synonym" in self.weights and synonyms == "vectors" and self._wv is None:
            raise ChannelError("synonyms='vectors' needs word vectors: set 'vectors', a synonym list name, "
                               "or synonym=false", "synonyms")
        if "synonym" in self.weights and synonyms not in (None, "vectors"):
            self._synonym_relation = load_synonym_list(synonyms)
        if not self.weights:
            raise ChannelError("every channel is off: switch one on", "lemma")
        self.cache_dir = cache_dir
        self.block_size = block_size
        self.notes: list[str] = []

    # ------------------------------------------------------------------------------------------ fitting
    @property
    def sparse_on(self) -> list[str]:
        return [c for c in C.SPARSE_CHANNELS if c in self.weights]

    def fit(self, source_ids: Sequence[str], source_texts: Sequence[str], *, progress: Progress | None = None):
        if progress:
            progress(0.0, f"analysing {len(source_texts)} sources")
        self.source_ids = list(source_ids)
        self.notes = []
        self._sdocs = C.analyse(source_texts)
        self._reference = shipped_index()
        if self._reference is None:
            self.notes.append(f"uniqueness counted over the searched sources: the reference index "
                              f"data/reference/{REFERENCE_INDEX} is not installed")
        if self._wv is not None and getattr(self._wv, "counts", None) is not None:
            counts = np.asarray(self._wv.counts, np.float64)
            self.rarity = C.Rarity(dict(zip(self._wv.keys, counts.tolist())), float(counts.sum()),
                                   f"word vectors {self.vectors_name}")
        else:
            self.rarity = C.Rarity.from_docs(self._sdocs)
            self.notes.append("rarity from the searched sources (no reference word vectors)")
        index = source_index(self._sdocs, self.rarity, rare_min=self.rare_min, channels=self.sparse_on)
        self._space, self._smat, self._sound_idf = index.space, index.matrices, index.sound_idf
        self._sfeats = LazyFeatures(self._sdocs, self.rarity, self.rare_min, self._sound_idf)  # for explanations
        self._lemma_postings = index.lemma_postings
        self._variants = VariantIndex(t for d in self._sdocs for t in d.tokens) if "edit" in self.weights else None
        self._sdense = {}
        if "semantic" in self.weights:
            from detection.methods.semantic.static_semantic import SegmentEncoder

            content = self._content_lemmas(self._sdocs)
            self._encoder = SegmentEncoder(self._wv, "sif").fit(content)
            self._sdense["semantic"] = self._encoder.encode(content).astype(np.float32)
        if "encoder" in self.weights:
            self._sdense["encoder"] = self._encode(list(source_texts), 1)
        if progress:
            progress(1.0, "sources indexed")
        return self

    @staticmethod
    def _content_lemmas(docs) -> list[list[str]]:
        return [[lem for tok, lem in zip(d.tokens, d.lemmas) if C.is_content(lem, tok)] for d in docs]

    def _encode(self, texts: list[str], side: int) -> np.ndarray:
        """Unit vectors of a configured sentence encoder (:class:`.encoders.BiEncoderRetriever`), with its
        query (side 0) or passage (side 1) prefix."""
        from detection.methods.semantic.encoders import BiEncoderRetriever

        enc = getattr(self, "_enc", None)
        if enc is None:
            enc = self._enc = BiEncoderRetriever(model=self.encoder_name, cache_dir=self.cache_dir)
        prefix = enc.query_prefix if side == 0 else enc.passage_prefix
        X = np.asarray(enc.encode(texts, prefix), np.float32)
        return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-9)

    # ------------------------------------------------------------------------------------------ searching
    def _query_side(self, query_texts: Sequence[str]):
        qdocs = C.analyse(query_texts)
        syn = None
        if "synonym" in self.weights:
            if self._synonym_relation is not None:  # a list chosen by name
                syn = self._synonym_relation
            else:  # the vectors' neighbours among the lemmas of these queries and the sources
                lemmas = {lem for d in qdocs for lem in d.lemmas} | {lem for d in self._sdocs for lem in d.lemmas}
                syn = C.vector_synonyms(self._wv, sorted(lemmas), store=self.cache_dir)
        var = None
        if "edit" in self.weights:  # query forms -> the source forms one edit away (C.edit_relation's pairs)
            var = self._variants.relation(t for d in qdocs for t in d.tokens)
        qfeats = [C.features(d, self.rarity, rare_min=self.rare_min, side="query", synonyms=syn, variants=var)
                  for d in qdocs]
        for cf in qfeats:
            C.weigh_sound(cf, self._sound_idf)
        qmat = {c: self._space.matrix(c, qfeats, grow=False) for c in self.sparse_on}
        qdense = {}
        if "semantic" in self.weights:
            qdense["semantic"] = self._encoder.encode(self._content_lemmas(qdocs)).astype(np.float32)
        if "encoder" in self.weights:
            qdense["encoder"] = self._encode(list(query_texts), 0)
        return qdocs, qfeats, qmat, qdense

    def _channel_block(self, ch: str, qmat, qdense, a: int, b: int, quota: int = 1):
        """(channel scores of local queries a..b-1 against every source, each row's top ``quota`` sources by the
        sparse kernel, or None for a dense channel). The lemma channel counts a source only with 2 shared."""
        if ch in qdense:
            return np.maximum(qdense[ch][a:b] @ self._sdense[ch].T, 0.0).astype(np.float32), None
        block, top, _ = score_block_dense(qmat[ch][a:b], self._smat[ch], quota, min_shared=2 if ch == "lemma" else 1)
        return block, top

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        return self.search_explained(query_texts, k, progress=progress, explain=False)[0]

    def search_range(self, query_texts, k: int, start: int, stop: int, *, progress: Progress | None = None) -> TopK:
        """Rows ``start..stop-1`` equal to those of a search over all ``query_texts`` (the context term reads the
        neighbouring queries)."""
        return self.search_explained(query_texts, k, progress=progress, explain=False, start=start, stop=stop)[0]

    def search_explained(self, query_texts, k: int, *, progress: Progress | None = None, explain: bool = True,
                         start: int = 0, stop: int | None = None):
        """(TopK of queries ``start..stop-1``, channel scores (rows, k, channels + context) or None, the query
        side) — the channel scores let :meth:`explain` say what each channel gave every candidate (row ``i`` of
        the result is query ``start + i``).

        Score = sum of weight x channel score, plus ``context_weight`` x the fused scores of the pairs one line
        before (query - 1, source - 1) and one line after (query + 1, source + 1): a parallel running over
        neighbouring lines of both texts counts on each of them. Candidates are chosen on the fused score
        without context (the union of the channels' lists, then the best fused), the list is ordered with it."""
        query_texts = list(query_texts)
        n_all = len(query_texts)
        stop = n_all if stop is None else min(int(stop), n_all)
        start = max(0, int(start))
        ctx_w = self.context_weight
        lo, hi = (max(0, start - 1), min(n_all, stop + 1)) if ctx_w > 0 else (start, stop)
        qdocs, qfeats, qmat, qdense = self._query_side(query_texts[lo:hi])
        off = start - lo  # local row of query ``start``
        nq, ns = stop - start, len(self.source_ids)
        chans = [c for c in C.CHANNELS if c in self.weights]
        width = len(chans) + (1 if ctx_w > 0 else 0)
        out_idx = np.full((nq, k), -1, np.int32)
        out_val = np.full((nq, k), np.nan, np.float32)
        per_channel = np.zeros((nq, k, width), np.float32) if explain else None
        depth = max(int(k), self.budget)  # the candidate list is the same for every k <= budget: a top-k is
        quota = depth  # the first k of any deeper one; every channel's list as deep as the budget (round robin)
        bs = self.block_size or max(16, min(1024, 4_000_000 // max(ns, 1)))
        for a in range(0, nq, bs):
            b = min(nq, a + bs)
            la, lb = a + off, b + off  # local rows of this block
            ea, eb = (max(0, la - 1), min(hi - lo, lb + 1)) if ctx_w > 0 else (la, lb)  # with the neighbour rows
            core = slice(la - ea, lb - ea)
            fused_ext = np.zeros((eb - ea, ns), np.float32)
            best = np.full((b - a, ns), np.inf, np.float32)  # a source's best rank in any channel's list
            blocks = {}
            for ch in chans:
                blk, top = self._channel_block(ch, qmat, qdense, ea, eb, quota)
                fused_ext += self.weights[ch] * blk
                if self.candidates == "union":
                    idx = top[core] if top is not None else topk_positive(blk[core], quota)[0]
                    rr, cc = np.nonzero(idx >= 0)
                    best[rr, idx[rr, cc]] = np.minimum(best[rr, idx[rr, cc]], cc.astype(np.float32))
                if explain:
                    blocks[ch] = blk[core]
            fused = fused_ext[core]
            # round robin over the channels' lists (rank 1 of each, then rank 2 ...) until the budget holds that
            # many sources: by best rank in any channel (equal ranks: the lower index); the rest by fused score
            key = np.where(np.isfinite(best), np.float32(depth + 1) - best, fused / (np.float32(1) + fused))
            idx, _ = topk_positive(key, depth)
            rows = np.arange(b - a)[:, None]
            safe = np.maximum(idx, 0)
            context = None
            if ctx_w > 0:
                context = np.zeros((b - a, ns), np.float32)
                for d in (-1, 1):  # the pair one line before, one line after, on both sides
                    r_lo, r_hi = max(la, ea - d), min(lb, eb - d)
                    if r_hi <= r_lo:
                        continue
                    src_rows = fused_ext[r_lo + d - ea:r_hi + d - ea]
                    tgt = slice(r_lo - la, r_hi - la)
                    if d == 1:
                        context[tgt, :-1] += src_rows[:, 1:]
                    else:
                        context[tgt, 1:] += src_rows[:, :-1]
                score_all = fused + np.float32(ctx_w) * context
            else:
                score_all = fused
            vals = np.where(idx >= 0, score_all[rows, safe], -np.inf)
            order = np.lexsort((np.where(idx >= 0, idx, np.iinfo(np.int32).max), -vals), axis=1)
            idx = np.take_along_axis(idx, order, axis=1)[:, :k]
            vals = np.take_along_axis(vals, order, axis=1)[:, :k]
            out_idx[a:b] = idx
            out_val[a:b] = np.where(idx >= 0, vals, np.nan)
            if explain:
                safe = np.maximum(idx, 0)
                for c, ch in enumerate(chans):
                    per_channel[a:b, :, c] = np.where(idx >= 0, blocks[ch][rows, safe], 0.0)
                if context is not None:
                    per_channel[a:b, :, len(chans)] = np.where(idx >= 0, context[rows, safe], 0.0)
            if progress:
                progress(b / max(nq, 1), f"{b}/{nq} queries")
        top = TopK(out_idx, out_val, self.source_ids)
        side = (qdocs[off:off + nq], qfeats[off:off + nq], chans + (["context"] if ctx_w > 0 else []))
        return top, per_channel, side

    def search_signals(self, query_texts, k: int, *, progress: Progress | None = None, start: int = 0,
                       stop: int | None = None):
        """(TopK, signals (rows, k, len(SIGNALS)) float32, the query side): :meth:`search_explained` with its channel
        scores laid out in :data:`SIGNALS`' columns (what a feature reranker learns from and is applied with)."""
        top, per, side = self.search_explained(query_texts, k, progress=progress, explain=True, start=start,
                                               stop=stop)
        return top, self.as_signals(per, side), side

    @staticmethod
    def as_signals(channel_scores: np.ndarray, query_side) -> np.ndarray:
        """:meth:`search_explained`'s channel scores (rows, k, channels that are on [+ context]) in :data:`SIGNALS`'
        columns (rows, k, len(SIGNALS)); a channel that is off scores 0."""
        out = np.zeros(channel_scores.shape[:2] + (len(SIGNALS),), np.float32)
        for c, ch in enumerate(query_side[2]):
            out[:, :, SIGNALS.index(f"channel_{ch}")] = channel_scores[:, :, c]
        return out

    # ------------------------------------------------------------------------------------------ explaining
    def explain(self, qi: int, sj: int, channel_scores: np.ndarray, query_side) -> dict:
        """The explanation of candidate (query ``qi``, source ``sj``): channels that fired with their score,
        weight, contribution and matched word pairs, and the rarity of the matched query words."""
        qdocs, qfeats, chans = query_side
        qf, sf = qfeats[qi], self._sfeats[sj]
        ex = fusion.explain(qdocs[qi], qf, self._sdocs[sj], sf, dict(zip(chans, channel_scores.tolist())),
                            {**self.weights, "context": self.context_weight}, self.rarity)
        return {"channels": ex["channels"], "uniqueness": self.uniqueness(qf, sf, (qdocs[qi], self._sdocs[sj])),
                "uniqueness_corpus": self.uniqueness_corpus, "rarity": ex["rarity"], "query_lines": [],
                "source_lines": []}

    @property
    def uniqueness_corpus(self) -> str:
        """What :meth:`uniqueness` counts over (shown with it)."""
        ref = self._reference
        return ref.describe() if ref is not None else f"the searched sources ({len(self.source_ids):,})"

    def uniqueness(self, qf: C.ChannelFeatures, sf: C.ChannelFeatures, docs: tuple | None = None) -> int | None:
        """How many other loci hold every content lemma this pair shares (0: no other passage has them all);
        None when the pair shares no lemma. Over the reference corpus's loci (:mod:`.reference_loci`; a locus
        with exactly the content lemmas of one of the pair's own lines is that line, not another) when its index
        is installed, else over the other fitted sources."""
        shared = set(qf.feats["lemma"]) & set(sf.feats["lemma"])
        if not shared:
            return None
        if self._reference is not None:
            own = [] if docs is None else [
                {lem for tok, lem in zip(toks, lems) if C.is_content(lem, tok)}
                for d in docs for toks, lems in zip(d.lines_tokens, d.lines_lemmas)]
            return self._reference.uniqueness(shared, [line for line in own if line])
        P, vocab = self._lemma_postings, self._space.vocab["lemma"]
        lists = sorted((P.indices[P.indptr[vocab[lem]]:P.indptr[vocab[lem] + 1]] for lem in shared), key=len)
        common = lists[0]
        for other in lists[1:]:
            common = np.intersect1d(common, other, assume_unique=True)
            if common.size <= 1:
                break
        return max(int(common.size) - 1, 0)


def synonyms_dir():
    """Where operators place synonym lists (Tesserae's CSV format): ``<shared data>/latin_synonyms``, or
    ``SIMILIA_SYNONYMS_DIR``."""
    import os
    from pathlib import Path

    from core.paths import shared_data_dir

    value = os.environ.get("SIMILIA_SYNONYMS_DIR", "").strip()
    return Path(value) if value else shared_data_dir() / "latin_synonyms"


def synonym_list_names() -> list[str]:
    folder = synonyms_dir()
    return sorted(p.stem for p in folder.glob("*.csv")) if folder.is_dir() else []


def load_synonym_list(name: str) -> C.Relation:
    """The synonym list ``name`` (a file ``<name>.csv`` in :func:`synonyms_dir`), chosen by name only."""
    try:
        C.check_synonym_name(name)
    except ValueError as exc:
        raise ChannelError(str(exc), "synonyms") from None
    path = synonyms_dir() / f"{name}.csv"
    if not path.is_file():
        have = ", ".join(synonym_list_names()) or "none"
        raise ChannelError(f"no synonym list named {name!r} (available: {have}, or 'vectors')", "synonyms")
    return C.read_synonym_csv(path)
