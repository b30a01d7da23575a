"""Cross-validation splits and per-fold evaluation documents (Appendix C).

* :func:`grouped_kfold` puts every citing query (with all its references) in exactly one fold, balancing the
  number of queries per fold (seeded); :func:`split_from_file` uses the folds given in a file; :func:`stored_split` completes them for queries the file
  gives no fold (gold promoted later).
* :func:`build_fold_pools` builds, per fold, the pairwise evaluation documents: the fold's citing queries plus
  as many in-domain query distractors (uncited-citing segments of the same works), and the sources they cite
  plus as many uncited source segments of the same works (seeded, disjoint across folds).
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .data import Benchmark


@dataclass
class Split:
    """Assignment of citing queries to folds."""

    name: str
    n_folds: int
    query_fold: dict[str, int]
    seed: int | None = None
    notes: list[str] = field(default_factory=list)

    def fold_queries(self, fold: int) -> list[str]:
        return [q for q, f in self.query_fold.items() if f == fold]

    def to_dict(self) -> dict:
        c = Counter(self.query_fold.values())
        return {"name": self.name, "n_folds": self.n_folds, "seed": self.seed, "notes": self.notes,
                "queries_per_fold": [c.get(f, 0) for f in range(self.n_folds)]}


def grouped_kfold(bench: Benchmark, n_folds: int = 5, seed: int = 0) -> Split:
    """Folds grouped by query: citing queries shuffled with ``seed`` and dealt round-robin, so fold sizes in
    queries differ by at most one and all references of a query share its fold."""
    qs = sorted(bench.citing_query_ids())
    random.Random(seed).shuffle(qs)
    return Split(f"grouped-{n_folds}-seed{seed}", n_folds, {q: i % n_folds for i, q in enumerate(qs)}, seed)


def split_from_file(bench: Benchmark, name: str) -> Split:
    """The folds given in a file (``bench.file_folds[name]``). A query whose links were in several folds
    has already been put in its majority fold by the loader; the split's notes say how many."""
    qf = bench.file_folds[name]
    citing = set(bench.citing_query_ids())
    qf = {q: f for q, f in qf.items() if q in citing}
    n = max(qf.values()) + 1 if qf else 0
    notes = []
    conf = bench.meta.get("fold_conflicts", {}).get(name)
    if conf and conf.get("queries_in_several_folds"):
        notes.append(f"{conf['queries_in_several_folds']} queries had links in several folds of the file; "
                     f"{conf['links_reassigned']} links moved to the query's majority fold")
    missing = citing - set(qf)
    if missing:
        notes.append(f"{len(missing)} citing queries without a fold in the file were not evaluated")
    return Split(f"file:{name}", n, qf, None, notes)


def stored_split(bench: Benchmark, name: str = "db", n_folds: int = 5, seed: int = 0) -> Split:
    """The folds of a stored version: the file's folds (``bench.file_folds[name]``) where it gives them, and every
    citing query it does not (gold added later, e.g. parallels promoted from workbench verdicts onto new queries)
    dealt to the folds as :func:`grouped_kfold` deals (sorted, shuffled with ``seed``, round-robin from the fold
    holding fewest queries), so no gold query is left out of training or evaluation. Without file folds:
    ``grouped_kfold(bench, n_folds, seed)``."""
    if name not in bench.file_folds:
        return grouped_kfold(bench, n_folds, seed)
    base = split_from_file(bench, name)
    missing = sorted(set(bench.citing_query_ids()) - set(base.query_fold))
    if not missing:
        return base
    random.Random(seed).shuffle(missing)
    qf = dict(base.query_fold)
    n = max(base.n_folds, 1)
    sizes = Counter(qf.values())
    start = min(range(n), key=lambda f: (sizes.get(f, 0), f))
    for i, q in enumerate(missing):
        qf[q] = (start + i) % n
    notes = [x for x in base.notes if "without a fold" not in x]
    notes.append(f"{len(missing)} citing queries without a fold in the file dealt to the {n} folds (seed {seed})")
    return Split(f"{base.name}+dealt", n, qf, seed, notes)


@dataclass
class FoldPool:
    """The pairwise evaluation documents of one fold (Table 4)."""

    fold: int
    citing_queries: list[str]
    query_distractors: list[str]
    cited_sources: list[str]
    source_distractors: list[str]
    n_pos: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def queries(self) -> list[str]:
        return self.citing_queries + self.query_distractors

    @property
    def sources(self) -> list[str]:
        return self.cited_sources + self.source_distractors

    @property
    def n_pairs(self) -> int:
        return len(self.queries) * len(self.sources)

    def table4_row(self) -> dict:
        return {"fold": self.fold, "citing": len(self.citing_queries), "query_distractors": len(self.query_distractors),
                "cited": len(self.cited_sources), "source_distractors": len(self.source_distractors),
                "pos": self.n_pos, "neg": self.n_pairs - self.n_pos, "pairs": self.n_pairs}


def _draw(needed_by_work: Counter, candidates_by_work: dict[str, list[str]], by_author: dict[str, list[str]],
          author_of_work: dict[str, str], everything: list[str], used: set, rng: random.Random) -> tuple[list[str], int]:
    """Draw distractors per work; fall back to the same author, then to anything unused. Returns (ids, fallback)."""
    out, fallback = [], 0
    for work in sorted(needed_by_work):
        need = needed_by_work[work]
        pools = [candidates_by_work.get(work, []), by_author.get(author_of_work.get(work, ""), []), everything]
        for level, pool in enumerate(pools):
            if need <= 0:
                break
            free = [x for x in pool if x not in used]
            take = rng.sample(free, min(need, len(free)))
            used.update(take)
            out += take
            need -= len(take)
            if level > 0:
                fallback += len(take)
    return out, fallback


def build_fold_pools(bench: Benchmark, split: Split, *, seed: int = 0, ratio: int = 1) -> list[FoldPool]:
    """Per-fold pairwise documents: citing queries + ``ratio`` x as many query distractors from the same works,
    cited sources + ``ratio`` x as many uncited source segments from the same works.

    Distractors are segments of ``bench.queries`` / ``bench.sources`` that take part in no gold link at all
    (so no other fold's reference can ever be counted as a false positive), drawn with ``seed`` and never
    reused across folds. Where a work has too few, the same author's other works and then any segment fill in
    (counted in the pool's notes). A benchmark holding only gold segments gets no distractors.

    Returns:
        one :class:`FoldPool` per fold.
    """
    rng = random.Random(seed)
    citing_all = set(bench.citing_query_ids())
    cited_all = set(bench.cited_source_ids())
    qseg = {s.seg_id: s for s in bench.queries}
    sseg = {s.seg_id: s for s in bench.sources}

    def index(segs, exclude):
        by_work, by_author, allx, author_of = defaultdict(list), defaultdict(list), [], {}
        for s in segs:
            author_of.setdefault(s.work, s.author)
            if s.seg_id in exclude:
                continue
            by_work[s.work].append(s.seg_id)
            by_author[s.author].append(s.seg_id)
            allx.append(s.seg_id)
        return by_work, by_author, allx, author_of

    qw, qa, qall, q_auth = index(bench.queries, citing_all)
    sw, sa, sall, s_auth = index(bench.sources, cited_all)
    links_by_q = defaultdict(list)
    for g in bench.gold:
        links_by_q[g.query_id].append(g)
    used_q, used_s = set(), set()
    pools = []
    for f in range(split.n_folds):
        cq = sorted(q for q in split.fold_queries(f) if q in citing_all)
        cs = sorted({g.source_id for q in cq for g in links_by_q[q]})
        need_q = Counter(qseg[q].work if q in qseg else "" for q in cq for _ in range(ratio))
        need_s = Counter(sseg[s].work if s in sseg else "" for s in cs for _ in range(ratio))
        dq, fbq = _draw(need_q, qw, qa, q_auth, qall, used_q, rng)
        ds, fbs = _draw(need_s, sw, sa, s_auth, sall, used_s, rng)
        notes = []
        if len(dq) < ratio * len(cq):
            notes.append(f"query distractors short by {ratio * len(cq) - len(dq)}")
        if len(ds) < ratio * len(cs):
            notes.append(f"source distractors short by {ratio * len(cs) - len(ds)}")
        if fbq or fbs:
            notes.append(f"distractors from other works: {fbq} query-side, {fbs} source-side")
        n_pos = sum(len(links_by_q[q]) for q in cq)
        pools.append(FoldPool(f, cq, sorted(dq), cs, sorted(ds), n_pos, notes))
    return pools


def table4(pools: list[FoldPool]) -> dict:
    """Table 4 for these pools: per-fold rows plus total and mean."""
    rows = [p.table4_row() for p in pools]
    keys = ["citing", "query_distractors", "cited", "source_distractors", "pos", "neg", "pairs"]
    total = {k: sum(r[k] for r in rows) for k in keys}
    mean = {k: (total[k] / len(rows) if rows else None) for k in keys}
    return {"rows": rows, "total": total, "mean": mean}

