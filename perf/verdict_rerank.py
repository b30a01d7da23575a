"""Learning from verdicts, simulated with the gold as the verifier (workbench "Re-rank with my verdicts").

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python perf/verdict_rerank.py [--data lucan,loci] [--books 6-10]
        [--budgets 50,100,250] [--cache DIR] [--write perf/expected/workbench/verdict_rerank.yaml]

A run of the ``channels`` retriever is made from a profile not tuned for the text type (Lucan -> Virgil from the
``prose`` profile, Loci Similes from ``verse``) and from the tuned one. The researcher goes down the run in score
order as the workbench shows it (the whole run, best first; equal scores in query order, then rank), verifies the
top B candidates (gold says confirmed or rejected: Lucan by the benchmark's forward rule, a candidate (L', A')
confirmed when a gold pair (L, A) has L' in L..L+2 and A' in A..A+2; Loci Similes exact pairs), and the weights are
fitted on those verdicts (``perf.verdict_fit.fit_weights``, as the workbench job does). Reported per
budget, on the gold queries none of whose lines had a verified candidate: per-query R@10 / R@100 without feedback,
re-ranked as the product does (``refit_scores``: each query keeps its order, so these equal the first), re-ordered
within queries by the fitted weights (each query's first 100; the experiment the product does not ship), the tuned
profile without feedback, and the in-sample ceiling of re-weighting within queries (the same model fitted on every
gold query's head: each confirmed candidate against each other one of its first 100, the evaluated queries
included, a weak prior); and the precision of the next 100 undecided candidates of the whole-run order, shipped
against re-ranked (what the product changes).

Lucan: the lines of Lucan's books ``--books`` (default 6-10, the held-out books; 2-5 is where the prior was chosen)
as the run's queries, in the poem's order (the context term reads the true neighbours), the 9,896 Aeneid lines as
sources, top 400 per line (a workbench run holds at most 2,000,000 candidates: 4,222 lines x 400 fit); the 7 line
ids the text numbers twice are left out (each of both lines). Loci Similes: the 463 citing queries of the 545-pair
gold against the whole source corpus (87,846 segments, ``detection.latin.loci_corpus``), as the suite runs it
(queries in the gold's order, no neighbours), top 1,000.
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

CEILING_PRIOR = 0.01
WITHIN_DEPTH = 100
NEXT = 100
MISMATCHED = {"lucan": "prose", "loci": "verse"}
TUNED = {"lucan": "verse", "loci": "prose"}


def _books(spec: str) -> set[int]:
    lo, _, hi = spec.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


# ---------------------------------------------------------------------------------------------------- data
class Data:
    """Query and source texts, and which (query row, source row) pairs the gold verifier confirms; ``spans``:
    per gold pair, the query rows and source rows that find it (Lucan's forward rule; Loci: the pair itself)."""

    def __init__(self, name, qids, qtexts, sids, stexts, pairs, cites):
        self.name, self.qids, self.qtexts, self.sids, self.stexts = name, qids, qtexts, sids, stexts
        self.pairs = pairs  # list of (query rows, source rows, key query row)
        self.confirmed = {(q, s) for qs, ss, _ in pairs for q in qs for s in ss}
        self.cites = cites  # the key query row of each gold query


def lucan(books: set[int]) -> Data:
    from benchmarks.verse.lucan_vergil import _book, _following, load_lucan_vergil

    vb = load_lucan_vergil()
    counts: dict[str, int] = {}
    for q in vb.query_ids:
        counts[q] = counts.get(q, 0) + 1
    keep = [i for i, q in enumerate(vb.query_ids) if counts[q] == 1 and int(_book(q)) in books]
    qids = [vb.query_ids[i] for i in keep]
    qtexts = [vb.query_texts[i] for i in keep]
    qrow = {q: i for i, q in enumerate(qids)}
    srow = {s: i for i, s in enumerate(vb.source_ids)}
    qspan, sspan = _following(qids, 2), _following(vb.source_ids, 2)
    pairs = []
    for q in sorted(vb.gold, key=lambda x: qrow.get(x, -1)):
        if q not in qrow:
            continue
        for a in sorted(vb.gold[q]):
            pairs.append(([qrow[x] for x in qspan[q]], [srow[x] for x in sspan[a]], qrow[q]))
    return Data("lucan", qids, qtexts, list(vb.source_ids), list(vb.source_texts), pairs,
                sorted({p[2] for p in pairs}))


def loci(corpus_dir: str) -> Data:
    from benchmarks.suite.suite import loci_benchmark

    b = loci_benchmark(corpus_dir=corpus_dir)
    srow = {s: i for i, s in enumerate(b.source_ids)}
    pairs = [([i], [srow[s]], i) for i, q in enumerate(b.query_ids) for s in sorted(b.gold[q]) if s in srow]
    return Data("loci", list(b.query_ids), list(b.query_texts), list(b.source_ids), list(b.source_texts), pairs,
                sorted({p[2] for p in pairs}))


# ----------------------------------------------------------------------------------------------------- runs
def run(data: Data, profile: str, k: int, cache: Path | None):
    """(indices (nq, k), scores, channel scores (nq, k, channels), channel names, shipped weights)."""
    path = cache / f"{data.name}-{len(data.qids)}-{profile}-{k}.npz" if cache else None
    if path and path.is_file():
        z = np.load(path, allow_pickle=False)
        names = [str(x) for x in z["names"]]
        return z["idx"], z["score"], z["X"], names, dict(zip(names, z["w0"].tolist()))
    from detection.methods import registry

    t = time.perf_counter()
    r = registry.build("channels", {"profile": profile})
    r.fit(data.sids, data.stexts)
    top, sig, _ = r.search_signals(data.qtexts, k)
    from detection.channels.channel_features import SIGNALS

    names = [s.removeprefix("channel_") for s in SIGNALS]
    shipped = {**{c: float(r.weights.get(c, 0.0)) for c in names}, "context": float(r.context_weight)}
    print(f"  {data.name} {profile}: {len(data.qids)} x {len(data.sids)} top {k} in {time.perf_counter() - t:.0f} s",
          flush=True)
    idx, score, X = np.asarray(top.indices), np.asarray(top.scores, np.float64), np.asarray(sig, np.float32)
    w0 = np.asarray([shipped[c] for c in names])
    if path:
        np.savez(path, idx=idx, score=score, X=X, names=np.asarray(names), w0=w0)
    return idx, score, X, names, shipped


def labels(data: Data, idx: np.ndarray) -> np.ndarray:
    rows = np.repeat(np.arange(idx.shape[0]), idx.shape[1]).reshape(idx.shape)
    conf = data.confirmed
    return np.fromiter(((int(q), int(s)) in conf for q, s in zip(rows.ravel(), idx.ravel())), bool,
                       idx.size).reshape(idx.shape)


def whole_run_order(idx: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Flat positions of the run's candidates best first (equal scores: query order, then rank)."""
    nq, k = idx.shape
    flat = np.where(idx.ravel() >= 0, np.nan_to_num(score.ravel(), nan=-np.inf), -np.inf)
    q = np.repeat(np.arange(nq), k)
    r = np.tile(np.arange(k), nq)
    order = np.lexsort((r, q, -flat))
    return order[np.isfinite(flat[order])]


def recall(data: Data, idx: np.ndarray, new_score: np.ndarray | None, queries: set[int]) -> dict:
    """Mean per-query R@10 and R@100 over the gold queries in ``queries`` (their pairs found within rank k of any
    query row of the pair's span, as the benchmark's rule)."""
    if new_score is not None:
        s = np.where(idx >= 0, new_score, -np.inf)
        order = np.lexsort((np.broadcast_to(np.arange(idx.shape[1]), idx.shape), -s), axis=1)
        idx = np.take_along_axis(idx, order, axis=1)
    pos = [dict() for _ in range(idx.shape[0])]
    per_q: dict[int, list[int]] = {}
    for qs, ss, key in data.pairs:
        if key not in queries:
            continue
        best = np.inf
        for q in qs:
            p = pos[q]
            if not p:
                p.update((int(j), r) for r, j in enumerate(idx[q]) if j >= 0)
                p.setdefault(-1, -1)
            for s in ss:
                if s in p:
                    best = min(best, p[s] + 1)
        per_q.setdefault(key, []).append(best)
    out = {}
    for k in (10, 100):
        out[f"R@{k}"] = float(np.mean([np.mean([b <= k for b in v]) for v in per_q.values()])) if per_q else float("nan")
    out["n_queries"] = len(per_q)
    return out


def _rows_ranks(idx: np.ndarray):
    nq, k = idx.shape
    return np.repeat(np.arange(nq), k), np.tile(np.arange(1, k + 1), nq)


def within(fit, run_out, depth: int = WITHIN_DEPTH) -> np.ndarray:
    """The experiment the product does not ship: each query's first ``depth`` candidates re-ordered by the fitted
    fused score (the rest below, in their order), as scores for :func:`recall`."""
    idx, score, X, names, _ = run_out
    new = fit.score(X.reshape(idx.size, -1), names).reshape(idx.shape)
    cols = np.arange(idx.shape[1])[None, :]
    return np.where(cols < depth, new + 1e9, -cols.astype(np.float64))


def simulate(data: Data, run_out, budget: int, prior: float):
    """(fit, the product's new scores (nq, k) or None, the verified flat positions, the gold queries none of whose
    lines had a verified candidate)."""
    from perf.verdict_fit import fit_weights, refit_scores

    idx, score, X, names, shipped = run_out
    y = labels(data, idx)
    order = whole_run_order(idx, score)[:budget]
    nq, k = idx.shape
    Xf = X.reshape(nq * k, -1)
    fit = fit_weights(Xf[order], names, shipped, y.ravel()[order].astype(int), prior=prior)
    new = refit_scores(fit, Xf, names, np.nan_to_num(score.ravel(), nan=-np.inf), *_rows_ranks(idx)).reshape(nq, k) \
        if fit.fitted else None
    verified = set((order // k).tolist())
    spans = {}
    for qs, _ss, key in data.pairs:
        spans.setdefault(key, set()).update(qs)
    untouched = {key for key, qs in spans.items() if not qs & verified}
    return fit, new, order, untouched


def next_precision(data: Data, idx, score, new, verified, n: int = NEXT) -> float:
    """Share of confirmed candidates among the next ``n`` undecided ones of the whole-run order (shipped scores,
    or ``new``)."""
    y = labels(data, idx).ravel()
    order = whole_run_order(idx, score if new is None else new)
    rest = order[~np.isin(order, verified)][:n]
    return float(y[rest].mean())


def ceiling(data: Data, run_out):
    """Weights fitted in-sample on every gold query's ranking: each confirmed candidate against each other one of
    its query's first :data:`WITHIN_DEPTH`, as pairwise differences (both ways round, a weak prior): about the most
    a re-weighting of the run's channels gives within queries here (applied as :func:`within`)."""
    from perf.verdict_fit import Refit, fit_log_ratios

    idx, score, X, names, shipped = run_out
    y = labels(data, idx)
    on = [i for i, c in enumerate(names) if shipped[c] > 0]
    diffs = []
    for q in sorted({q for qs, _s, _k in data.pairs for q in qs}):
        head = slice(0, min(idx.shape[1], WITHIN_DEPTH))
        pos, neg = np.flatnonzero(y[q, head]), np.flatnonzero(~y[q, head] & (idx[q, head] >= 0))
        if pos.size and neg.size:
            diffs.append((X[q, pos][:, None, on] - X[q, neg][None, :, on]).reshape(-1, len(on)))
    D = np.concatenate(diffs).astype(np.float64)
    w0 = np.asarray([shipped[names[i]] for i in on])
    u = fit_log_ratios(np.concatenate([D, -D]), np.repeat([1.0, 0.0], len(D)), w0, CEILING_PRIOR)
    weights = dict(shipped)
    for j, i in enumerate(on):
        weights[names[i]] = float(w0[j] * np.exp(u[j]))
    return Refit(True, "", shipped, weights, 0, 0)


def _r(d: dict) -> dict:
    return {m: round(d[m], 4) for m in ("R@10", "R@100")}


def budget_row(data: Data, run_out, budget: int, prior: float, ceil) -> dict:
    idx, score = run_out[0], run_out[1]
    fit, new, verified, untouched = simulate(data, run_out, budget, prior)
    base = recall(data, idx, None, untouched)
    row = {"verdicts": f"{fit.n_positive} confirmed / {fit.n_negative} rejected", "fitted": fit.fitted,
           "queries": base["n_queries"], "no_feedback": _r(base),
           "re_ranked": _r(recall(data, idx, new, untouched)),
           "within_queries_experiment": _r(recall(data, idx, within(fit, run_out), untouched)) if fit.fitted else None,
           "in_sample_ceiling": _r(recall(data, idx, within(ceil, run_out), untouched)),
           f"next_{NEXT}_precision": {"shipped": round(next_precision(data, idx, score, None, verified), 3),
                                      "re_ranked": round(next_precision(data, idx, score, new, verified), 3)},
           "weights": {c["channel"]: c["ratio"] for c in fit.changes()} if fit.fitted else {},
           "held_out_auc": fit.held_out}
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="lucan,loci")
    ap.add_argument("--books", default="6-10")
    ap.add_argument("--budgets", default="50,100,250")
    ap.add_argument("--priors", default="", help="comma-separated priors to compare (default: the shipped PRIOR)")
    ap.add_argument("--loci-corpus", default="", help="a built Loci Similes corpus folder (built here when empty)")
    ap.add_argument("--cache", default="", help="keep the runs' arrays here between calls")
    ap.add_argument("--write", default="", help="write the figures to this YAML file")
    args = ap.parse_args()
    from perf.verdict_fit import PRIOR

    cache = Path(args.cache) if args.cache else None
    if cache:
        cache.mkdir(parents=True, exist_ok=True)
    priors = [float(p) for p in args.priors.split(",")] if args.priors else [PRIOR]
    budgets = [int(b) for b in args.budgets.split(",")]
    t0, c0 = time.perf_counter(), time.process_time()
    report = {"command": " ".join(["perf/verdict_rerank.py"] + sys.argv[1:]), "prior": priors[0], "datasets": {}}
    for name in args.data.split(","):
        if name == "lucan":
            data, k = lucan(_books(args.books)), 400
            label = f"Lucan books {args.books} -> Aeneid ({len(data.qids):,} x {len(data.sids):,} lines, top {k})"
        else:
            corpus = args.loci_corpus
            if not corpus:
                from core.paths import shared_data_dir
                from detection.latin.loci_corpus import build_corpus

                corpus = str((cache or Path("/tmp")) / "loci_corpus")
                if not (Path(corpus) / "source.csv").is_file():
                    build_corpus(shared_data_dir() / "latin_texts", corpus)
            data, k = loci(corpus), 1000
            label = f"Loci Similes ({len(data.qids)} citing queries x {len(data.sids):,} sources, top {k})"
        print(label, flush=True)
        bad, good = run(data, MISMATCHED[name], k, cache), run(data, TUNED[name], k, cache)
        entry = {"run": label, "start_profile": MISMATCHED[name], "tuned_profile": TUNED[name], "budgets": {}}
        ceil_bad, ceil_good = ceiling(data, bad), ceiling(data, good)
        entry["ceiling_weights"] = {"start": {c["channel"]: c["ratio"] for c in ceil_bad.changes()},
                                    "tuned": {c["channel"]: c["ratio"] for c in ceil_good.changes()}}
        for prior in priors:
            for budget in budgets:
                row = {"start": budget_row(data, bad, budget, prior, ceil_bad),
                       "tuned": budget_row(data, good, budget, prior, ceil_good)}
                untouched = simulate(data, bad, budget, prior)[3]
                row["tuned_profile_no_feedback"] = _r(recall(data, good[0], None, untouched))
                key = str(budget) if len(priors) == 1 else f"{budget} (prior {prior})"
                entry["budgets"][key] = row
                s_, t_ = row["start"], row["tuned"]
                print(f"  B={budget:>4} prior={prior} (R@10 / R@100 on {s_['queries']} | {t_['queries']} queries)\n"
                      f"    start {s_['verdicts']} fitted={s_['fitted']}: none {s_['no_feedback']}, re-ranked "
                      f"{s_['re_ranked']}, within {s_['within_queries_experiment']}, ceiling "
                      f"{s_['in_sample_ceiling']}; tuned profile {row['tuned_profile_no_feedback']}; "
                      f"next {NEXT} precision {s_[f'next_{NEXT}_precision']}\n"
                      f"    tuned {t_['verdicts']} fitted={t_['fitted']}: none {t_['no_feedback']}, re-ranked "
                      f"{t_['re_ranked']}, within {t_['within_queries_experiment']}, ceiling "
                      f"{t_['in_sample_ceiling']}; next {NEXT} precision {t_[f'next_{NEXT}_precision']}", flush=True)
        report["datasets"][name] = entry
    report["seconds"] = round(time.perf_counter() - t0, 1)
    report["cpu_seconds"] = round(time.process_time() - c0, 1)
    report["cores"] = os.cpu_count()
    print(f"{report['seconds']} s, {report['cpu_seconds']} CPU-s", flush=True)
    if args.write:
        import yaml

        Path(args.write).write_text(yaml.safe_dump(report, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
