"""Matching gold segments to corpus segments: by id, then by normalised text, then by near-identical text.

:func:`attach_corpus` rewrites a gold-only benchmark (e.g. the 545 pairs) onto full query/source corpora so
that retrieval can run against the whole corpus and distractors can be drawn; gold segments that cannot be
found are appended to the corpus (so they stay retrievable) and listed in the :class:`MatchReport`.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

from .data import Benchmark, GoldLink, Segment, merge_links

_TRANS = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe"})
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def normalise_text(text: str) -> str:
    """Lower case, no diacritics, u/i spelling, letters only, single spaces."""
    t = unicodedata.normalize("NFD", text or "")
    t = "".join(c for c in t if not unicodedata.combining(c)).lower().translate(_TRANS)
    return " ".join(_WORD.findall(t))


def normalise_id(seg_id: str) -> str:
    return re.sub(r"\s+", " ", (seg_id or "").strip().strip("<>").lower()).strip()


@dataclass
class MatchReport:
    """What was matched how, and what was not."""

    side: str
    n_gold_segments: int = 0
    by_id: int = 0
    by_text: int = 0
    by_fuzzy: int = 0
    unmatched: list[str] = field(default_factory=list)
    ambiguous_text: int = 0  # normalised text occurs more than once in the corpus (first one taken)
    id_text_mismatch: int = 0  # same id in the corpus but a different text (then matched by text or not at all)
    mapping: dict[str, str] = field(default_factory=dict)

    @property
    def matched(self) -> int:
        return self.by_id + self.by_text + self.by_fuzzy

    def to_dict(self, with_mapping: bool = False) -> dict:
        d = asdict(self)
        if not with_mapping:
            d.pop("mapping")
        d["matched"] = self.matched
        d["match_rate"] = self.matched / self.n_gold_segments if self.n_gold_segments else None
        return d


def _similar(a: str, b: str, min_jaccard: float = 0.5) -> bool:
    """Texts plausibly the same segment: one contains the other, or token-set Jaccard >= ``min_jaccard``."""
    if not a or not b:
        return not a and not b
    if a in b or b in a:
        return True
    x, y = set(a.split()), set(b.split())
    return len(x & y) / len(x | y) >= min_jaccard


def match_segments(gold: list[Segment], corpus: list[Segment], *, side: str = "", fuzzy: bool = True,
                   min_jaccard: float = 0.8, verify_id_text: bool = True) -> MatchReport:
    """Map each gold segment to a corpus segment id.

    Order: (1) same id (case/space/angle brackets ignored), accepted only if the texts are plausibly the same
    (``verify_id_text``: containment or Jaccard >= 0.5; editions number differently, and Tesserae's prefix for
    De oratore is ``cic. orat.``, which is also the Orator's); (2) same normalised text; (3) if ``fuzzy``: the
    corpus segment with the highest token-set Jaccard >= ``min_jaccard`` among those sharing the gold text's
    rarest tokens, or a corpus segment whose normalised text contains the gold text (or is contained in it, when
    it is at least half as long). Everything else is reported unmatched.
    """
    rep = MatchReport(side, len(gold))
    by_id = {normalise_id(s.seg_id): s.seg_id for s in corpus}
    by_text: dict[str, str] = {}
    dup = Counter()
    norm = {}
    for s in corpus:
        nt = normalise_text(s.text)
        norm[s.seg_id] = nt
        dup[nt] += 1
        by_text.setdefault(nt, s.seg_id)
    rest = []
    for g in gold:
        cid = by_id.get(normalise_id(g.seg_id))
        nt = normalise_text(g.text)
        if cid is not None and (not verify_id_text or _similar(nt, norm[cid])):
            rep.mapping[g.seg_id] = cid
            rep.by_id += 1
            continue
        if cid is not None:
            rep.id_text_mismatch += 1
        cid = by_text.get(nt)
        if cid is not None and nt:
            rep.mapping[g.seg_id] = cid
            rep.by_text += 1
            rep.ambiguous_text += dup[nt] > 1
            continue
        rest.append((g, nt))
    if fuzzy and rest:
        df = Counter()
        toks = {}
        for sid, nt in norm.items():
            ts = frozenset(nt.split())
            toks[sid] = ts
            df.update(ts)
        inv = defaultdict(list)
        wanted = set()
        for g, nt in rest:
            ts = sorted(set(nt.split()), key=lambda t: (df.get(t, 0), t))
            wanted.update(t for t in ts[:3] if df.get(t, 0))
        for sid, ts in toks.items():
            for t in ts & wanted:
                inv[t].append(sid)
        for g, nt in rest:
            gs = frozenset(nt.split())
            rare = sorted(gs, key=lambda t: (df.get(t, 0), t))[:3]
            cands = Counter(c for t in rare for c in inv.get(t, ()))
            best, best_j = None, 0.0
            for c, _ in cands.most_common(50):
                cs = toks[c]
                j = len(gs & cs) / len(gs | cs) if gs | cs else 0.0
                contained = (nt and nt in norm[c]) or (norm[c] and norm[c] in nt and len(norm[c]) * 2 >= len(nt))
                score = max(j, 0.99 if contained else 0.0)
                if score > best_j:
                    best, best_j = c, score
            if best is not None and best_j >= min_jaccard:
                rep.mapping[g.seg_id] = best
                rep.by_fuzzy += 1
            else:
                rep.unmatched.append(g.seg_id)
    else:
        rep.unmatched += [g.seg_id for g, _ in rest]
    return rep


def attach_corpus(bench: Benchmark, query_corpus: list[Segment], source_corpus: list[Segment], *,
                  fuzzy: bool = True, name: str | None = None, keep_gold_queries: bool = True) -> tuple[Benchmark, dict]:
    """Rewrite ``bench`` onto full corpora.

    Returns:
        (benchmark whose ``sources`` are the source corpus plus unmatched gold sources, gold source ids rewritten
        to corpus ids; report ``{"queries": MatchReport dict, "sources": ..., "merged_links": n}``).
        Two gold segments mapped onto one corpus segment merge their links (counted in ``merged_links``).
        With ``keep_gold_queries`` (default) the gold query segments keep their ids and texts (taking author/work
        from their matched corpus segment) and the query corpus minus the matched segments is added as
        distractor material; otherwise queries are rewritten like sources.
    """
    rq = match_segments(bench.queries, query_corpus, side="query", fuzzy=fuzzy)
    rs = match_segments(bench.sources, source_corpus, side="source", fuzzy=fuzzy)
    if keep_gold_queries:
        # queries keep their benchmark id and text (the unit being evaluated); the corpus segments they match
        # leave the distractor candidates, and their author/work label the gold query for in-work sampling
        cseg = {c.seg_id: c for c in query_corpus}
        used = set(rq.mapping.values())
        gq = [Segment(s.seg_id, s.text, cseg[rq.mapping[s.seg_id]].author, cseg[rq.mapping[s.seg_id]].work,
                      s.ref) if s.seg_id in rq.mapping else s for s in bench.queries]
        query_corpus = [c for c in query_corpus if c.seg_id not in used and c.seg_id not in {s.seg_id for s in gq}]
        bench = Benchmark(bench.name, gq, bench.sources, bench.gold, bench.raw_links, bench.file_folds, bench.version,
                          dict(bench.meta))
        rq_report = rq.to_dict()
        rq = MatchReport("query", len(gq))
        rq.unmatched = [s.seg_id for s in gq]
        rq.mapping = {}
    else:
        rq_report = None
    qmap = dict(rq.mapping)
    smap = dict(rs.mapping)
    extra_q = [s for s in bench.queries if s.seg_id not in qmap]
    extra_s = [s for s in bench.sources if s.seg_id not in smap]
    qmap.update({s.seg_id: s.seg_id for s in extra_q})
    smap.update({s.seg_id: s.seg_id for s in extra_s})
    cq = {s.seg_id for s in query_corpus}
    cs = {s.seg_id for s in source_corpus}
    clash_q = [s for s in extra_q if s.seg_id in cq]
    clash_s = [s for s in extra_s if s.seg_id in cs]
    if clash_q or clash_s:  # an unmatched gold id that is also a corpus id: keep both apart
        for s in clash_q:
            qmap[s.seg_id] = "gold:" + s.seg_id
        for s in clash_s:
            smap[s.seg_id] = "gold:" + s.seg_id
    extra_q = [Segment(qmap[s.seg_id], s.text, s.author, s.work, s.ref) for s in extra_q]
    extra_s = [Segment(smap[s.seg_id], s.text, s.author, s.work, s.ref) for s in extra_s]
    remap = lambda links: [GoldLink(qmap[g.query_id], smap[g.source_id], g.label, g.pair_id, g.fold, g.provenance)
                           for g in links]
    raw = remap(bench.raw_links or bench.gold)
    gold = merge_links(remap(bench.gold))
    file_folds = {k: {qmap[q]: f for q, f in v.items() if q in qmap} for k, v in bench.file_folds.items()}
    out = Benchmark(name or f"{bench.name}+corpus", list(query_corpus) + extra_q, list(source_corpus) + extra_s,
                    gold, raw, file_folds, bench.version, dict(bench.meta))
    report = {"queries": rq_report or rq.to_dict(), "sources": rs.to_dict(),
              "merged_links": len(bench.gold) - len(gold), "keep_gold_queries": keep_gold_queries}
    out.meta["match_report"] = report
    out.meta["gold_to_corpus"] = {"queries": rq.mapping, "sources": rs.mapping}
    return out, report


def check_gold_ids(bench: Benchmark) -> dict:
    """Gold links whose query or source id is not a segment of the benchmark."""
    qs = {s.seg_id for s in bench.queries}
    ss = {s.seg_id for s in bench.sources}
    mq = sorted({g.query_id for g in bench.gold if g.query_id not in qs})
    ms = sorted({g.source_id for g in bench.gold if g.source_id not in ss})
    return {"missing_query_ids": mq, "missing_source_ids": ms, "ok": not mq and not ms}

