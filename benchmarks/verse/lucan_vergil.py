"""The Lucan -> Virgil verse benchmark (Lucan, Bellum Civile 2-10, against the Aeneid; 816 commentary parallels).

Files (see ``shared/data/README.md``): ``lucan_vergil/all_lucan.txt`` (the Tesserae project's benchmark: one
parallel a row, ``TARGET_BOOK TARGET_LINE ... SOURCE_BOOK SOURCE_LINE ... AUTH``) and the two poems as Tesserae
``.tess`` files. Queries are the lines of Lucan's books 2-10 with their ``.tess`` ids (``luc. 2.5``), sources
the lines of the Aeneid (``verg. aen. 12.85``).

A parallel is phrase-level: it may run over the next line or two on either side. :func:`evaluate_verse` counts
a gold pair (L, A) as found when a query line of L..L+tolerance ranks a source line of A..A+tolerance
(``tolerance=2`` by default; 0 is the strict line-to-line measure). "Next line" is the next line of the same
book in the file's order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from core.paths import shared_data_dir
from detection.latin.errors import InputError
from detection.latin.readers import read_tess, read_text_file, tess_prefix

GOLD_FILE = Path("lucan_vergil") / "all_lucan.txt"
LUCAN_FILE = Path("latin_texts") / "tesserae" / "lucan.bellum_civile.tess"
VERGIL_FILE = Path("latin_texts") / "tesserae" / "vergil.aeneid.tess"
QUERY_BOOKS = tuple(range(2, 11))
PER_QUERY_KS = (1, 10, 100, 1000)
GLOBAL_NS = (1_000, 10_000)


@dataclass
class VerseBenchmark:
    """Line-level queries and sources with gold parallels (ids are the texts' own line ids)."""

    name: str
    query_ids: list[str]
    query_texts: list[str]
    source_ids: list[str]
    source_texts: list[str]
    gold: dict[str, set[str]]
    authorities: dict[tuple[str, str], str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # gold rows naming a line the texts lack (file:line: why)

    @property
    def n_pairs(self) -> int:
        return sum(len(v) for v in self.gold.values())


def _tess_lines(path: Path) -> tuple[list[str], list[str]]:
    prefix = tess_prefix(path)
    units = read_tess(path)
    return [f"{prefix} {u.ref}" for u in units], [u.text for u in units]


def _book(line_id: str) -> str:
    return line_id.rsplit(" ", 1)[-1].split(".", 1)[0]


def load_lucan_vergil(data_dir: str | Path | None = None) -> VerseBenchmark:
    """Read the benchmark from ``data_dir`` (default: the shared data folder).

    Raises :class:`InputError` naming the file and line when a file is missing or a gold row is malformed. A
    row naming a line the poems do not have (upstream's ``verg. aen. 8.860``; book 8 has 731 lines) is kept
    out and listed in ``skipped``."""
    root = Path(data_dir) if data_dir is not None else shared_data_dir()
    for rel in (GOLD_FILE, LUCAN_FILE, VERGIL_FILE):
        if not (root / rel).is_file():
            raise InputError(f"missing benchmark file (data folder {root})", path=root / rel)
    luc_ids, luc_texts = _tess_lines(root / LUCAN_FILE)
    keep = [i for i, lid in enumerate(luc_ids) if int(_book(lid)) in QUERY_BOOKS]
    query_ids = [luc_ids[i] for i in keep]
    query_texts = [luc_texts[i] for i in keep]
    source_ids, source_texts = _tess_lines(root / VERGIL_FILE)
    qset, sset = set(query_ids), set(source_ids)
    gold: dict[str, set[str]] = {}
    authorities: dict[tuple[str, str], str] = {}
    skipped: list[str] = []
    path = root / GOLD_FILE
    for lineno, raw in enumerate(read_text_file(path).splitlines(), 1):
        if lineno == 1 or not raw.strip():
            continue
        cols = raw.split("\t")
        if len(cols) < 7:
            raise InputError(f"expected 7 tab-separated columns, got {len(cols)}", path=path, line=lineno)
        tb, tl, _tt, sb, sl, _st, auth = (c.strip() for c in cols[:7])
        if not (tb.isdigit() and tl.isdigit() and sb.isdigit() and sl.isdigit()):
            raise InputError("book and line numbers must be integers", path=path, line=lineno)
        qid, sid = f"luc. {int(tb)}.{int(tl)}", f"verg. aen. {int(sb)}.{int(sl)}"
        if qid not in qset or sid not in sset:
            missing = qid if qid not in qset else sid
            skipped.append(f"{path.name}:{lineno}: {missing} is not a line of the texts")
            continue
        gold.setdefault(qid, set()).add(sid)
        authorities.setdefault((qid, sid), auth)
    return VerseBenchmark("lucan-vergil", query_ids, query_texts, source_ids, source_texts, gold, authorities, skipped)


def _following(ids: Sequence[str], tolerance: int) -> dict[str, list[str]]:
    """Each line id -> itself and the next ``tolerance`` lines of the same book."""
    out: dict[str, list[str]] = {}
    for i, lid in enumerate(ids):
        book, span = _book(lid), [lid]
        for j in range(i + 1, min(len(ids), i + 1 + tolerance)):
            if _book(ids[j]) != book:
                break
            span.append(ids[j])
        out[lid] = span
    return out


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


def evaluate_verse(benchmark: VerseBenchmark, ranked: Mapping[str, Sequence[str]], *,
                   scores: Mapping[str, Sequence[float]] | None = None, tolerance: int = 2,
                   ks: Sequence[int] = PER_QUERY_KS, global_ns: Sequence[int] = GLOBAL_NS) -> dict:
    """Per-query and whole-run recall of ``ranked`` (query line id -> source line ids, best first).

    Per query (the gold's query lines): ``R@k`` = share of its gold sources found within rank k, averaged over
    queries; ``MRR@10`` = 1 / rank of its first gold source found within 10 (0 if none). A gold pair's rank is
    the best rank, over query lines L..L+tolerance, of any source line A..A+tolerance.

    Whole run (Tesserae's measure): all retrieved pairs sorted by ``scores`` (best first; ties: query order,
    then rank), or rank by rank across queries when ``scores`` is None; ``global_recall[N]`` = share of gold
    pairs found among the first N pairs, ``"full"`` among all of them.
    """
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    qspan = _following(benchmark.query_ids, tolerance)
    sspan = _following(benchmark.source_ids, tolerance)
    # Only the query lines a gold window touches are looked up: their rank of each source.
    needed = sorted({line for q in benchmark.gold for line in qspan[q]}, key=benchmark.query_ids.index)
    position = {line: {} for line in needed}
    for line in needed:
        pos = position[line]
        for r, sid in enumerate(ranked.get(line, ()) or ()):
            pos.setdefault(sid, r)
    # Whole-run order: global rank of (query line, rank position).
    offsets, qorder = {}, []
    lengths = []
    total = 0
    for qid in benchmark.query_ids:
        n = len(ranked.get(qid, ()) or ())
        offsets[qid] = total
        qorder.append(qid)
        lengths.append(n)
        total += n
    lengths_a = np.asarray(lengths, np.int64)
    qidx = np.repeat(np.arange(len(qorder), dtype=np.int64), lengths_a)
    rpos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths_a) - lengths_a, lengths_a)
    if scores is not None:
        flat = np.empty(total, np.float64)
        for qid in qorder:
            n = len(ranked.get(qid, ()) or ())
            if n:
                sc = np.asarray(scores[qid], np.float64)[:n]
                if sc.shape[0] != n:
                    raise ValueError(f"scores of {qid} are shorter than its ranking")
                flat[offsets[qid]:offsets[qid] + n] = sc
        flat = np.where(np.isnan(flat), -np.inf, flat)
        order = np.lexsort((rpos, qidx, -flat))
    else:
        order = np.lexsort((qidx, rpos))
    grank = np.empty(total, np.int64)
    grank[order] = np.arange(total, dtype=np.int64)

    recall = {k: [] for k in ks}
    mrr = []
    pair_grank = []
    for q in sorted(benchmark.gold, key=benchmark.query_ids.index):
        best_ranks = []
        for a in sorted(benchmark.gold[q]):
            best, best_g = math.inf, math.inf
            for line in qspan[q]:
                pos = position[line]
                for s in sspan[a]:
                    r = pos.get(s)
                    if r is not None:
                        best = min(best, r + 1)
                        best_g = min(best_g, int(grank[offsets[line] + r]) + 1)
            best_ranks.append(best)
            pair_grank.append(best_g)
        for k in ks:
            recall[k].append(sum(r <= k for r in best_ranks) / len(best_ranks))
        first = min(best_ranks)
        mrr.append(1.0 / first if first <= 10 else 0.0)
    gr = np.asarray(pair_grank, np.float64)
    n_pairs = gr.size
    global_recall = {str(n): float(np.mean(gr <= n)) if n_pairs else math.nan for n in global_ns}
    global_recall["full"] = float(np.mean(np.isfinite(gr))) if n_pairs else math.nan
    return {
        "benchmark": benchmark.name,
        "tolerance": tolerance,
        "n_queries": len(mrr),
        "n_pairs": n_pairs,
        "n_retrieved_pairs": int(total),
        "per_query": {**{f"R@{k}": _mean(recall[k]) for k in ks}, "MRR@10": _mean(mrr)},
        "global_recall": global_recall,
    }
