"""Compare two Loci Similes evaluation reports of the same benchmark and pool: metric deltas, per-query
differences, gold references one finds within k and the other misses; and two candidate lists (a workbench
detection's, or a detection's and an evaluation run's ranked heads): the pairs each proposes that the other does not."""
from __future__ import annotations


def metric_rows(summary_a: dict, summary_b: dict) -> list[dict]:
    """Every numeric summary metric the two share: a, b, b − a."""
    rows = []
    for key in summary_a:
        a, b = summary_a.get(key), summary_b.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            rows.append({"metric": key, "a": a, "b": b, "delta": b - a})
    return rows


def final_summary(summary: dict) -> dict:
    """A run's figures after its last stage: ``recall@10`` is the reranked ``rerank_recall@10`` where the run had
    a reranker (so a retrieval-only run compares with a reranked one on what each delivers), the ``rerank_*``
    keys folded in; figures only a reranker has (``rerank_cit_f1``) are kept under their own name."""
    out = {k: v for k, v in summary.items() if not k.startswith("rerank_")}
    for key, value in summary.items():
        if key.startswith("rerank_"):
            base = key[len("rerank_"):]
            out[base if base in out else key] = value
    return out


def citation_key(ref: str) -> tuple:
    """A citation's sort key: its numbers as numbers (``luc. 1.2`` before ``luc. 1.10``), its words as words."""
    import re

    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|\D+", str(ref)))


def _found(rank, k: int) -> bool:
    return rank is not None and 1 <= rank <= k


def gold_differences(pairs_a: list[dict], pairs_b: list[dict], k: int) -> dict:
    """Gold pairs (query_id, source_id) found within the top k by one run and not the other, in citation order."""
    rank_a = {(p["query_id"], p["source_id"]): p.get("rank") for p in pairs_a}
    rank_b = {(p["query_id"], p["source_id"]): p.get("rank") for p in pairs_b}
    label = {(p["query_id"], p["source_id"]): p.get("label") for p in pairs_a + pairs_b}
    only_a, only_b = [], []
    for key in sorted(set(rank_a) | set(rank_b), key=lambda qs: (citation_key(qs[0]), citation_key(qs[1]))):
        ra, rb = rank_a.get(key), rank_b.get(key)
        row = {"query_id": key[0], "source_id": key[1], "label": label.get(key), "rank_a": ra, "rank_b": rb}
        if _found(ra, k) and not _found(rb, k):
            only_a.append(row)
        elif _found(rb, k) and not _found(ra, k):
            only_b.append(row)
    both = sum(1 for key in set(rank_a) & set(rank_b) if _found(rank_a[key], k) and _found(rank_b[key], k))
    return {"k": k, "only_a": only_a, "only_b": only_b, "both": both}


def query_differences(per_query_a: list[dict], per_query_b: list[dict], limit: int = 50) -> list[dict]:
    """Queries whose reciprocal rank differs most between the runs (largest |rr_b − rr_a| first)."""
    rr_b = {row["query_id"]: row.get("rr") for row in per_query_b}
    rows = []
    for row in per_query_a:
        a, b = row.get("rr"), rr_b.get(row["query_id"])
        if a is None or b is None or a == b:
            continue
        rows.append({"query_id": row["query_id"], "fold": row.get("fold"), "rr_a": a, "rr_b": b, "delta": b - a})
    rows.sort(key=lambda r: (-abs(r["delta"]), r["query_id"]))
    return rows[:limit]


def query_lists(row_a: dict | None, row_b: dict | None, gold: dict[str, str]) -> dict:
    """One query's two ranked heads side by side (``top``: [[source_id, score], …] of each run's per-query row),
    every source marked with its gold type (None when not gold) and its rank in the other list; and the gold
    sources one head holds that the other does not."""
    def head(row):
        return [(str(s), float(sc)) for s, sc in ((row or {}).get("top") or [])]

    a, b = head(row_a), head(row_b)
    rank_a = {s: r for r, (s, _) in enumerate(a, 1)}
    rank_b = {s: r for r, (s, _) in enumerate(b, 1)}

    def rows(items, other):
        return [{"rank": r, "source_id": s, "score": sc, "gold": gold.get(s), "rank_other": other.get(s)}
                for r, (s, sc) in enumerate(items, 1)]

    return {"a": rows(a, rank_b), "b": rows(b, rank_a), "n_gold": len(gold),
            "only_a": sorted(s for s in gold if s in rank_a and s not in rank_b),
            "only_b": sorted(s for s in gold if s in rank_b and s not in rank_a),
            "neither": sorted(s for s in gold if s not in rank_a and s not in rank_b)}


def list_differences(lists_a: dict[str, list], lists_b: dict[str, list], gold: dict | None = None,
                     limit: int = 200) -> dict:
    """Two runs' candidates (query id → ranked [(source id, score), …]) pair by pair: how many each proposes, how
    many both, the pairs only one proposes (``limit`` of each listed, gold marked from ``gold``: (query, source) →
    type), and the queries whose lists differ most. Queries only one run holds count as that run's only."""
    gold = gold or {}
    rank_a = {(q, str(s)): r for q, rows in lists_a.items() for r, (s, _) in enumerate(rows, 1)}
    rank_b = {(q, str(s)): r for q, rows in lists_b.items() for r, (s, _) in enumerate(rows, 1)}

    def only(mine, other):
        keys = sorted(set(mine) - set(other))
        return len(keys), [{"query_id": q, "source_id": s, "rank": mine[(q, s)], "gold": gold.get((q, s))}
                           for q, s in keys[:limit]]

    n_only_a, only_a = only(rank_a, rank_b)
    n_only_b, only_b = only(rank_b, rank_a)
    both = len(set(rank_a) & set(rank_b))
    per_query = []
    for q in sorted(set(lists_a) | set(lists_b)):
        a = {str(s) for s, _ in lists_a.get(q, [])}
        b = {str(s) for s, _ in lists_b.get(q, [])}
        if a != b:
            per_query.append({"query_id": q, "both": len(a & b), "only_a": len(a - b), "only_b": len(b - a)})
    per_query.sort(key=lambda r: (-(r["only_a"] + r["only_b"]), r["query_id"]))
    union = len(set(rank_a) | set(rank_b))
    return {"n_a": len(rank_a), "n_b": len(rank_b), "both": both, "jaccard": both / union if union else 1.0,
            "n_only_a": n_only_a, "n_only_b": n_only_b, "only_a": only_a, "only_b": only_b,
            "gold_a": sum(1 for key in rank_a if key in gold), "gold_b": sum(1 for key in rank_b if key in gold),
            "n_gold": len(gold), "queries": per_query[:limit]}
