"""Lexical analysis shared by the reference-type rule (§3.3), the lexical-overlap audit (the review's test)
and the per-pair overlap features (Table 5, Figure 6).

A text is cut into hard-punctuation segments (``. ! ?``), tokenised and lemmatised by the project's one Latin
pipeline (:func:`detection.latin.analysis.latin_tokens`, the retrievers' tokeniser), and stopwords are dropped
to give the *content* sequence of each segment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from detection.latin.analysis import latin_lemmas, latin_tokens
from detection.latin.stopwords import LATIN_STOPWORDS
from detection.methods.lexical.sparse import term_count_matrix

HARD_PUNCT = re.compile(r"[.!?]+")


@dataclass(frozen=True)
class Analysed:
    """Content lemmas of a text, per hard-punctuation segment (stopwords removed), and its surface tokens."""

    segments: tuple[tuple[str, ...], ...]  # content lemmas per hard segment
    surface_segments: tuple[tuple[str, ...], ...]  # content surface tokens per hard segment

    @property
    def content(self) -> tuple[str, ...]:
        return tuple(x for seg in self.segments for x in seg)

    @property
    def content_surface(self) -> tuple[str, ...]:
        return tuple(x for seg in self.surface_segments for x in seg)


def analyse(text: str, stop: frozenset | None = None) -> Analysed:
    """Cut ``text`` at hard punctuation, tokenise, lemmatise, drop stopwords (by token or lemma)."""
    stop = LATIN_STOPWORDS if stop is None else stop
    segs, surf = [], []
    for part in HARD_PUNCT.split(text or ""):
        toks = latin_tokens(part)
        if not toks:
            continue
        lems = latin_lemmas(toks)
        keep = [(t, lem) for t, lem in zip(toks, lems) if t not in stop and lem not in stop]
        segs.append(tuple(lem for _, lem in keep))
        surf.append(tuple(t for t, _ in keep))
    return Analysed(tuple(segs), tuple(surf))


def analyse_many(texts, stop: frozenset | None = None) -> list[Analysed]:
    stop = LATIN_STOPWORDS if stop is None else stop
    return [analyse(t, stop) for t in texts]


def content_set(a: Analysed, surface: bool = False) -> frozenset:
    return frozenset(a.content_surface if surface else a.content)


def content_bigrams(a: Analysed, surface: bool = False) -> frozenset:
    """Adjacent content-lemma bigrams (ordered), inside hard segments, stopwords removed first."""
    segs = a.surface_segments if surface else a.segments
    return frozenset((x, y) for seg in segs for x, y in zip(seg, seg[1:]) if x != y)


def proximal_pairs(a: Analysed, max_gap: int = 2, surface: bool = False) -> frozenset:
    """Unordered pairs of distinct content lemmas at most ``max_gap`` content words apart, inside one
    hard-punctuation segment (word order between the two is free)."""
    segs = a.surface_segments if surface else a.segments
    out = set()
    for seg in segs:
        n = len(seg)
        for i in range(n):
            for j in range(i + 1, min(n, i + max_gap + 2)):
                if seg[i] != seg[j]:
                    out.add((seg[i], seg[j]) if seg[i] < seg[j] else (seg[j], seg[i]))
    return frozenset(out)


def reference_type(q: Analysed, s: Analysed, *, max_gap: int = 2, min_lemmas: int = 2,
                   sides: str = "both") -> str:
    """The deterministic reference-type rule of §3.3 (Schropp et al. 2024b).

    ``cit.`` if at least ``min_lemmas`` (2) lemmas shared by query and source occur in close proximity (at
    most ``max_gap`` = 2 intervening words once stopwords are removed) inside one hard-punctuation segment;
    otherwise ``cf.``. ``sides`` says where proximity is required: ``both`` texts (default), ``query`` or
    ``source`` only, or ``either``.
    """
    shared = content_set(q) & content_set(s)
    if len(shared) < min_lemmas:
        return "cf."
    if min_lemmas != 2:
        return "cit." if _cluster_rule(q, s, shared, max_gap, min_lemmas, sides) else "cf."
    pq = {p for p in proximal_pairs(q, max_gap) if p[0] in shared and p[1] in shared}
    ps = {p for p in proximal_pairs(s, max_gap) if p[0] in shared and p[1] in shared}
    if sides == "both":
        ok = bool(pq & ps)
    elif sides == "query":
        ok = bool(pq)
    elif sides == "source":
        ok = bool(ps)
    else:
        ok = bool(pq or ps)
    return "cit." if ok else "cf."


def _cluster_rule(q, s, shared, max_gap, min_lemmas, sides):
    def clusters(a):
        out = []
        for seg in a.segments:
            pos = [i for i, x in enumerate(seg) if x in shared]
            cur = []
            for i in pos:
                if cur and i - cur[-1] > max_gap + 1:
                    out.append(frozenset(seg[j] for j in cur))
                    cur = []
                cur.append(i)
            if cur:
                out.append(frozenset(seg[j] for j in cur))
        return [c for c in out if len(c) >= min_lemmas]
    cq, cs = clusters(q), clusters(s)
    if sides == "query":
        return bool(cq)
    if sides == "source":
        return bool(cs)
    if sides == "either":
        return bool(cq or cs)
    return any(len(a & b) >= min_lemmas for a in cq for b in cs)


def pair_overlap(q: Analysed, s: Analysed, surface: bool = False) -> dict:
    """Shared content lemmas / bigrams of one pair and its overlap bucket."""
    lem = content_set(q, surface) & content_set(s, surface)
    bi = content_bigrams(q, surface) & content_bigrams(s, surface)
    return {"shared_lemmas": len(lem), "shared_bigrams": len(bi), "bucket": overlap_bucket(len(lem), len(bi)),
            "lemmas": sorted(lem)}


BUCKETS = ("bigram", "two_lemmas", "one_lemma", "none")


def overlap_bucket(n_lemmas: int, n_bigrams: int) -> str:
    """``bigram`` (>= 1 shared content-lemma bigram), else ``two_lemmas`` (>= 2 shared content lemmas), else
    ``one_lemma``, else ``none``. The buckets are exclusive and ordered by strength."""
    if n_bigrams >= 1:
        return "bigram"
    if n_lemmas >= 2:
        return "two_lemmas"
    if n_lemmas == 1:
        return "one_lemma"
    return "none"


def audit(pairs: list[tuple[Analysed, Analysed]], labels: list[str] | None = None, surface: bool = False) -> dict:
    """The lexical-overlap audit: how many gold pairs share >= 1 content-lemma bigram, >= 2 content lemmas,
    exactly one lemma, nothing (exclusive buckets), plus cumulative shares, overall and per label.

    Returns:
        ``{"n", "buckets": {bucket: {"n", "share"}}, "share_ge1_bigram", "share_ge2_lemmas",
        "share_nothing", "mean_shared_lemmas", "by_label": {...}, "per_pair": [...]}``
    """
    per = [pair_overlap(q, s, surface) for q, s in pairs]
    labels = labels or ["link"] * len(per)

    def summarise(rows):
        n = len(rows)
        counts = {b: sum(r["bucket"] == b for r in rows) for b in BUCKETS}
        return {"n": n,
                "buckets": {b: {"n": c, "share": c / n if n else None} for b, c in counts.items()},
                "share_ge1_bigram": counts["bigram"] / n if n else None,
                "share_ge2_lemmas": sum(r["shared_lemmas"] >= 2 for r in rows) / n if n else None,
                "share_nothing": counts["none"] / n if n else None,
                "mean_shared_lemmas": float(np.mean([r["shared_lemmas"] for r in rows])) if n else None}

    out = summarise(per)
    out["by_label"] = {lab: summarise([r for r, lb in zip(per, labels) if lb == lab]) for lab in sorted(set(labels))}
    out["per_pair"] = [{"shared_lemmas": r["shared_lemmas"], "shared_bigrams": r["shared_bigrams"],
                        "bucket": r["bucket"], "lemmas": r["lemmas"]} for r in per]
    out["unit"] = "surface" if surface else "lemma"
    return out


# ------------------------------------------------------------------------------------- grid (vectorised) form
def feature_matrices(queries: list[Analysed], sources: list[Analysed], kind: str = "lemmas", max_gap: int = 2):
    """Binary sparse matrices (queries x features, sources x features) for ``lemmas`` (content lemmas),
    ``bigrams`` (content-lemma bigrams) or ``proximal`` (proximal lemma pairs of the §3.3 rule).
    ``Q @ S.T`` then counts what each query/source pair shares, for the whole grid at once."""
    fn = {"lemmas": content_set, "bigrams": content_bigrams,
          "proximal": lambda a: proximal_pairs(a, max_gap)}[kind]
    vocab: dict = {}
    S = term_count_matrix([fn(a) for a in sources], vocab, grow=True)  # sets: binary
    Q = term_count_matrix([fn(a) for a in queries], vocab, grow=False)
    return Q, S


def shared_counts_grid(queries: list[Analysed], sources: list[Analysed], kind: str = "lemmas") -> np.ndarray:
    """(nq, ns) int32 number of shared features of every query/source pair (sparse product)."""
    Q, S = feature_matrices(queries, sources, kind)
    return np.asarray((Q @ S.T).toarray(), dtype=np.int32)


def rule_grid(queries: list[Analysed], sources: list[Analysed], max_gap: int = 2) -> np.ndarray:
    """(nq, ns) bool: the §3.3 rule (``sides="both"``, two lemmas) says ``cit.`` for the pair.

    A shared proximal pair (a, b) on both sides implies a and b are shared content lemmas, so this equals
    :func:`reference_type` for every pair."""
    return shared_counts_grid_kind(queries, sources, "proximal", max_gap) > 0


def shared_counts_grid_kind(queries, sources, kind, max_gap=2):
    Q, S = feature_matrices(queries, sources, kind, max_gap)
    return np.asarray((Q @ S.T).toarray(), dtype=np.int32)


def reference_type_agreement(bench, analysed_q: dict, analysed_s: dict, **rule_kw) -> dict:
    """Apply the rule to every typed gold link and compare with the gold type.

    Returns:
        ``{"n", "agree", "agreement", "confusion": {gold: {rule: n}}, "disagreements": [...]}``.
    """
    rows, conf = [], {}
    for g in bench.gold:
        if g.label not in ("cit.", "cf."):
            continue
        r = reference_type(analysed_q[g.query_id], analysed_s[g.source_id], **rule_kw)
        conf.setdefault(g.label, {}).setdefault(r, 0)
        conf[g.label][r] += 1
        rows.append((g, r))
    n = len(rows)
    agree = sum(g.label == r for g, r in rows)
    dis = [{"query_id": g.query_id, "source_id": g.source_id, "gold": g.label, "rule": r,
            "shared_lemmas": sorted(content_set(analysed_q[g.query_id]) & content_set(analysed_s[g.source_id]))}
           for g, r in rows if g.label != r]
    cit_gold = conf.get("cit.", {})
    cf_gold = conf.get("cf.", {})
    kappa = _cohen_kappa(cit_gold.get("cit.", 0), cit_gold.get("cf.", 0), cf_gold.get("cit.", 0),
                         cf_gold.get("cf.", 0))
    return {"n": n, "agree": agree, "agreement": agree / n if n else None, "cohen_kappa": kappa,
            "confusion": conf, "disagreements": dis, "params": {"max_gap": 2, "min_lemmas": 2, "sides": "both",
                                                                 **rule_kw}}


def _cohen_kappa(a, b, c, d):
    n = a + b + c + d
    if not n:
        return None
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return (po - pe) / (1 - pe) if pe < 1 else None


