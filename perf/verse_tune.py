"""Tuning harness of the ``channels`` verse defaults on the Lucan -> Virgil benchmark, with held-out books.

    OMP_NUM_THREADS=1 .venv/bin/python perf/verse_tune.py [--tune-books 2-5] [--variants base,ctxfill,...]

Computes every channel's score block once for the query lines the gold windows touch (each with the line before
and after, so the context term reads the true neighbours; runs of lines separated by an empty query), then
re-fuses those blocks under each candidate variant and prints per-query R@1/10/100/1000 and MRR@10 on the tuning
books and on the held-out books separately. The fusion here mirrors ``MultiChannelRetriever.search_explained``
(variant ``minrank_idx`` is the code's candidate rule now: the channels' lists round robin, equal ranks to the lower
index; ``base`` the previous even split filled by the fused score; the chosen variant is then run through the
retriever itself on the whole benchmark: ``--full``). Variants: ``base``, ``fused``, ``fused_ctx``, ``ctxfill``,
``ctxunion``, ``ctxboth``, ``waterfill``, ``share`` (``--shares``), ``minrank``, ``minrank_idx``, ``minrank_2nd``,
``minrank_fused``, ``minrank_ctx``, ``minrank_half``, ``rrf``; ``--weights`` re-weighs channels.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _books(spec: str) -> set[int]:
    lo, _, hi = spec.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def subset_queries(bench, tolerance=2):
    """Query lines needed by the gold windows plus one line either side, as runs separated by '' (an empty
    query: no channel fires, so a run's edge reads no false neighbour)."""
    from benchmarks.verse.lucan_vergil import _following

    span = _following(bench.query_ids, tolerance)
    pos = {q: i for i, q in enumerate(bench.query_ids)}
    need = sorted({pos[line] for q in bench.gold for line in span[q]})
    keep = sorted({j for i in need for j in (i - 1, i, i + 1) if 0 <= j < len(bench.query_ids)})
    ids, texts, prev = [], [], None
    for i in keep:
        if prev is not None and i != prev + 1:
            ids.append(None)
            texts.append("")
        ids.append(bench.query_ids[i])
        texts.append(bench.query_texts[i])
        prev = i
    return ids, texts


def compute_blocks(r, texts, bs=256):
    _qdocs, _qfeats, qmat, qdense = r._query_side(texts)
    chans = [c for c in r.weights]
    out = {c: np.zeros((len(texts), len(r.source_ids)), np.float32) for c in chans}
    for a in range(0, len(texts), bs):
        b = min(len(texts), a + bs)
        for c in chans:
            out[c][a:b] = r._channel_block(c, qmat, qdense, a, b)[0]
    return out


def fuse(blocks, weights, ctx_w, budget, k, variant, sem_share=None):
    from detection.methods.infrastructure.topk import topk_exact

    chans = [c for c in blocks if weights.get(c, 0) > 0]
    n, ns = next(iter(blocks.values())).shape
    fused = np.zeros((n, ns), np.float32)
    for c in chans:
        fused += np.float32(weights[c]) * blocks[c]
    context = np.zeros_like(fused)
    if ctx_w > 0:
        context[1:, 1:] += fused[:-1, :-1]
        context[:-1, :-1] += fused[1:, 1:]
    score_all = fused + np.float32(ctx_w) * context
    depth = max(k, budget)
    union = np.zeros((n, ns), bool)
    if variant != "fused":
        if variant == "share":  # the semantic channel gets `sem_share` of the budget, the rest split evenly
            quotas = {c: max(1, int(depth * sem_share)) if c == "semantic" else
                      max(1, int(depth * (1 - sem_share)) // (len(chans) - 1)) for c in chans}
        else:
            quotas = {c: max(1, depth // len(chans)) for c in chans}
        if variant == "waterfill":  # per query: q with sum_c min(positives_c, q) = depth (unused quota flows on)
            pos = np.stack([(blocks[c] > 0).sum(axis=1) for c in chans], axis=1)
            row_q = water_level(pos, depth)
            quotas = {c: int(row_q.max()) for c in chans}
        for c in chans:
            src = blocks[c]
            if variant in ("ctxunion", "ctxboth"):
                src = src.copy()
                if ctx_w > 0:  # a channel's own score with its neighbours' (the channel's context)
                    src[1:, 1:] += np.float32(ctx_w) * blocks[c][:-1, :-1]
                    src[:-1, :-1] += np.float32(ctx_w) * blocks[c][1:, 1:]
            idx, _ = topk_exact(src, quotas[c], floor=0.0)
            if variant == "waterfill":
                idx = np.where(np.arange(idx.shape[1])[None, :] < row_q[:, None], idx, -1)
            rr, cc = np.nonzero(idx >= 0)
            union[rr, idx[rr, cc]] = True
    fill = score_all if variant in ("ctxfill", "ctxboth", "fused_ctx") else fused
    key = np.where(union, fill + np.float32(1e6), fill)
    if variant in ("minrank", "rrf", "minrank_half", "minrank_idx", "minrank_2nd", "minrank_fused", "minrank_ctx"):
        ranks = channel_ranks(blocks, chans)
        if variant in ("minrank_fused", "minrank_ctx"):  # the fusion's own list is one more list in the round
            ranks += channel_ranks({"fused": fused if variant == "minrank_fused" else score_all}, ["fused"])
        if variant == "rrf":  # fill by reciprocal-rank fusion of the channels' lists (k0 = 60)
            rrf = sum(np.where(np.isfinite(r), 1.0 / (60.0 + r), 0.0) for r in ranks).astype(np.float32)
            key = np.where(union, np.float32(1e6) + fill, rrf)
        else:  # round robin: a source's best rank in any channel; every channel goes equally deep
            best = np.minimum.reduce(ranks)
            inv = np.where(np.isfinite(best), -best, -np.inf).astype(np.float32)
            if variant in ("minrank", "minrank_fused", "minrank_ctx"):  # equal ranks by the fused score
                tie = fused / (np.float32(1) + fused)
                key = np.where(np.isfinite(best), np.float32(depth + 1) - best + tie, tie)
            elif variant == "minrank_idx":  # equal ranks by the lower source index
                key = np.where(np.isfinite(best), np.float32(depth + 1) - best, 0.0).astype(np.float32)
            elif variant == "minrank_2nd":  # equal ranks by the best rank in another channel
                second = np.sort(np.stack(ranks), axis=0)[1]
                tie = np.where(np.isfinite(second), 1.0 / (2.0 + second), 0.0).astype(np.float32)
                key = np.where(np.isfinite(best), np.float32(depth + 1) - best + tie, 0.0).astype(np.float32)
            else:  # half the budget by the fused score, the rest round robin
                half, _ = topk_exact(fused, depth // 2, floor=0.0)
                rr, cc = np.nonzero(half >= 0)
                keep = np.zeros_like(union)
                keep[rr, half[rr, cc]] = True
                key = np.where(keep, np.float32(2e6) + fused, np.where(np.isfinite(best), np.float32(1e6) + inv, 0.0))
    idx, _ = topk_exact(key, depth, floor=0.0)
    rows = np.arange(n)[:, None]
    safe = np.maximum(idx, 0)
    vals = np.where(idx >= 0, score_all[rows, safe], -np.inf)
    order = np.lexsort((np.where(idx >= 0, idx, np.iinfo(np.int32).max), -vals), axis=1)
    idx = np.take_along_axis(idx, order, axis=1)[:, :k]
    vals = np.take_along_axis(vals, order, axis=1)[:, :k]
    return idx, vals


def channel_ranks(blocks, chans):
    """Per channel, every source's rank in that channel's list (0 = best; inf where the channel gives 0)."""
    out = []
    for c in chans:
        b = blocks[c]
        order = np.argsort(-b, axis=1, kind="stable")
        r = np.empty(b.shape, np.float32)
        np.put_along_axis(r, order, np.arange(b.shape[1], dtype=np.float32)[None, :].repeat(b.shape[0], 0), axis=1)
        out.append(np.where(b > 0, r, np.inf).astype(np.float32))
    return out


def water_level(pos: np.ndarray, depth: int) -> np.ndarray:
    """Per row, the largest quota q with sum over channels of min(positives, q) <= depth (at least depth //
    channels): a channel with fewer candidates than its share leaves the rest to the others."""
    n, m = pos.shape
    lo = np.full(n, max(1, depth // m), np.int64)
    hi = np.full(n, depth, np.int64)
    while np.any(lo < hi):
        mid = (lo + hi + 1) // 2
        ok = np.minimum(pos, mid[:, None]).sum(axis=1) <= depth
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid - 1)
    return lo


def split_eval(bench, qids, idx, vals, books_a, books_b):
    from benchmarks.verse.lucan_vergil import VerseBenchmark, evaluate_verse

    ranked, scores = {}, {}
    for i, q in enumerate(qids):
        if q is None:
            continue
        row = idx[i]
        m = row >= 0
        ranked[q] = [bench.source_ids[j] for j in row[m]]
        scores[q] = vals[i][m].tolist()
    res = {}
    for name, books in (("tune", books_a), ("held", books_b), ("all", books_a | books_b)):
        gold = {q: s for q, s in bench.gold.items() if int(q.split(" ")[1].split(".")[0]) in books}
        sub = VerseBenchmark(bench.name, bench.query_ids, bench.query_texts, bench.source_ids, bench.source_texts,
                             gold)
        res[name] = evaluate_verse(sub, ranked, global_ns=())["per_query"]
    return res


def fmt(res):
    return "  ".join(f"{name} " + " ".join(f"{res[name][m]:.4f}" for m in ("R@1", "R@10", "R@100", "R@1000", "MRR@10"))
                     for name in ("tune", "held", "all"))


def full_run(bench, books_a, books_b):
    """``channels`` with its defaults over all 7,366 query lines (the code itself, not the re-fusion), evaluated
    on all gold pairs and on each split's: per-query figures and whole-run recall at 1,000 / 10,000 / all pairs
    (the run's pairs sorted by score across the queries of every book)."""
    from benchmarks.verse.lucan_vergil import VerseBenchmark, evaluate_verse
    from detection.methods import registry

    t = time.perf_counter()
    r = registry.build("channels").fit(bench.source_ids, bench.source_texts)
    fit_s = time.perf_counter() - t
    top = r.search(bench.query_texts, 1000)
    search_s = time.perf_counter() - t - fit_s
    ranked, scores = {}, {}
    for i, q in enumerate(bench.query_ids):
        m = top.indices[i] >= 0
        ranked[q] = [bench.source_ids[j] for j in top.indices[i][m]]
        scores[q] = top.scores[i][m].tolist()
    print(f"channels defaults, whole benchmark: fit {fit_s:.0f} s, search {search_s:.0f} s, load "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    for name, books in (("all", books_a | books_b), ("tune", books_a), ("held", books_b)):
        gold = {q: s for q, s in bench.gold.items() if int(q.split(" ")[1].split(".")[0]) in books}
        sub = VerseBenchmark(bench.name, bench.query_ids, bench.query_texts, bench.source_ids, bench.source_texts,
                             gold)
        res = evaluate_verse(sub, ranked, scores=scores)
        pq, gr = res["per_query"], res["global_recall"]
        print(f"{name:5s} {res['n_queries']} queries, {res['n_pairs']} pairs: "
              + " ".join(f"{k} {pq[k]:.4f}" for k in ("R@1", "R@10", "R@100", "R@1000", "MRR@10"))
              + " | global@1k {:.3f} @10k {:.3f} full {:.3f}".format(gr["1000"], gr["10000"], gr["full"]), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tune-books", default="2-5")
    ap.add_argument("--held-books", default="6-10")
    ap.add_argument("--variants", default="base,ctxfill,ctxunion,ctxboth,fused,fused_ctx")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--weights", default="", help="channel=weight,... over the profile's; ';' between configurations")
    ap.add_argument("--context", type=float, default=None)
    ap.add_argument("--shares", default="0.2,0.3,0.5")
    ap.add_argument("--full", action="store_true", help="the retriever's defaults on the whole benchmark, whole-run "
                    "recall too, per split")
    args = ap.parse_args()
    from benchmarks.verse.lucan_vergil import load_lucan_vergil
    from detection.methods import registry

    bench = load_lucan_vergil()
    if args.full:
        return full_run(bench, _books(args.tune_books), _books(args.held_books))
    qids, qtexts = subset_queries(bench)
    t = time.perf_counter()
    r = registry.build("channels").fit(bench.source_ids, bench.source_texts)
    blocks = compute_blocks(r, qtexts)
    print(f"{sum(q is not None for q in qids)} query lines ({len(qids)} rows) x {len(bench.source_ids)} sources; "
          f"blocks in {time.perf_counter() - t:.1f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    ctx = r.context_weight if args.context is None else args.context
    print("columns: R@1 R@10 R@100 R@1000 MRR@10 per split", flush=True)
    ta, tb = _books(args.tune_books), _books(args.held_books)
    for config in args.weights.split(";"):
        weights = dict(r.weights)
        for item in filter(None, config.split(",")):
            c, _, w = item.partition("=")
            weights[c] = float(w)
        for variant in args.variants.split(","):
            shares = [float(s) for s in args.shares.split(",")] if variant == "share" else [None]
            for share in shares:
                t = time.perf_counter()
                idx, vals = fuse(blocks, weights, ctx, args.budget, 1000, variant, share)
                res = split_eval(bench, qids, idx, vals, ta, tb)
                label = variant + (f"({share})" if share is not None else "") + (f" [{config}]" if config else "")
                print(f"{label:14s} {fmt(res)}  ({time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
