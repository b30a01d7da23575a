"""The benchmark's standard runs on the 545-pair data, writing reports and the README tables::

    python -m benchmarks.loci.standard_runs --corpus-dir /tmp/loci_corpus --out /tmp/loci_runs \
        [--method bm25-lemma --method tfidf-surface ...] [--pools gold,gold+distractors,corpus]

Writes ``<retriever>__<pool>.json`` retrieval reports, ``pairwise.json`` (classification with the lexical-rule
scorer + BM25 depth sweep on the fold documents), ``reftype.json``, ``audit.json``, ``summary.md``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from detection.latin import overlap
from detection.methods import registry

from . import data, matching, method_adapters, splits
from . import report as R
from .evaluate import evaluate_pairwise, evaluate_retrieval

LEXICAL = ("tfidf-surface", "tfidf-lemma", "tfidf-lemma-12", "bm25-surface", "bm25-lemma", "tesserae")


def reftype_and_audit(bench: data.Benchmark) -> tuple[dict, dict]:
    """Rule agreement with the gold types and the lexical-overlap audit (lemmas and surface forms)."""
    an_q = {s.seg_id: overlap.analyse(s.text) for s in bench.queries if s.seg_id in set(bench.citing_query_ids())}
    an_s = {s.seg_id: overlap.analyse(s.text) for s in bench.sources if s.seg_id in set(bench.cited_source_ids())}
    rt = {"both": overlap.reference_type_agreement(bench, an_q, an_s),
          "query_side": overlap.reference_type_agreement(bench, an_q, an_s, sides="query"),
          "either_side": overlap.reference_type_agreement(bench, an_q, an_s, sides="either")}
    pairs = [(an_q[g.query_id], an_s[g.source_id]) for g in bench.gold]
    labels = [g.label for g in bench.gold]
    aud = {"lemma": overlap.audit(pairs, labels), "surface": overlap.audit(pairs, labels, surface=True)}
    for a in aud.values():
        a.pop("per_pair")
    return rt, aud


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.standard_runs")
    p.add_argument("--corpus-dir")
    p.add_argument("--out", required=True)
    p.add_argument("--method", action="append", default=None,
                   help=f"retriever of the registry, repeatable (default: {', '.join(LEXICAL)})")
    p.add_argument("--pools", default="gold,gold+distractors,corpus")
    p.add_argument("--split", default="ref_type")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-pairwise", action="store_true")
    return p.parse_args(argv)


def _split(bench, a):
    return splits.split_from_file(bench, a.split) if a.split != "grouped" else splits.grouped_kfold(bench, 5, a.seed)


def main(argv=None) -> int:
    a = _parse_args(argv)
    retrievers = a.method or list(LEXICAL)
    for name in retrievers:  # an unknown name is an error before anything runs, not a skipped row
        registry.validate(name, {}, kind="retriever")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    gold_bench = data.load_default_545()
    rt, aud = reftype_and_audit(gold_bench)
    (out / "reftype.json").write_text(json.dumps(rt, indent=1))
    (out / "audit.json").write_text(json.dumps(aud, indent=1))
    _log(f"reference-type rule agreement {rt['both']['agreement']:.3f}; audit bigram "
         f"{aud['lemma']['share_ge1_bigram']:.3f}")
    bench, match = gold_bench, None
    if a.corpus_dir:
        qc, sc = data.read_corpus_dir(a.corpus_dir)
        bench, match = matching.attach_corpus(gold_bench, qc, sc)
        (out / "match_report.json").write_text(json.dumps(match, indent=1))
        _log(f"attached corpus: {match['sources']['matched']}/{match['sources']['n_gold_segments']} gold sources "
             f"matched, {match['queries']['matched']}/{match['queries']['n_gold_segments']} queries")
    sp = _split(bench, a)
    pools = splits.build_fold_pools(bench, sp, seed=a.seed)
    t4 = splits.table4(pools)
    (out / "table4.json").write_text(json.dumps({"table4": t4, "notes": {p.fold: p.notes for p in pools}}, indent=1))
    reports = {}
    for pool in a.pools.split(","):
        if pool == "corpus" and not a.corpus_dir:
            continue
        b, spl = (gold_bench, _split(gold_bench, a)) if pool == "gold" else (bench, sp)
        for name in retrievers:
            reports[(name, pool)] = _retrieval_run(b, spl, name, pool, pools, a.seed, match, out)
    pair = None
    if not a.skip_pairwise:
        pair = evaluate_pairwise(bench, sp, pools, scorer=method_adapters.LexicalRuleScorer("tfidf-lemma"),
                                 retriever=method_adapters.EngineRetrieverMethod("bm25-lemma"))
        (out / "pairwise.json").write_text(json.dumps(pair))
        _log(f"pairwise: cit. F1 {pair['classification']['cit.']['mean']['macro_gold']['f1']['mean']:.3f}, "
             f"cf. F1 {pair['classification']['cf.']['mean']['macro_gold']['f1']['mean']:.3f}")
    (out / "summary.md").write_text(_summary_markdown(t4, reports, a.pools.split(","), pair))
    return 0


def _retrieval_run(bench, split, name: str, pool: str, fold_pools, seed: int, match, out: Path) -> dict:
    rep = evaluate_retrieval(bench, split, method_adapters.EngineRetrieverMethod(name), pool=pool,
                             fold_pools=fold_pools if pool == "gold+distractors" else None, seed=seed)
    if match and pool != "gold":
        rep["match_report"] = match
    (out / f"{name}__{pool.replace('+', '_')}.json").write_text(json.dumps(rep))
    _log(f"{name} [{pool}, {rep['pool']['n_sources']} sources] R@10={rep['recall@10']:.3f} "
         f"R@100={rep['recall@100']:.3f} R@1000={rep['recall@1000']:.3f} MRR@10={rep['mrr@10']:.3f} "
         f"({rep['timing']['total_s']:.1f}s)")
    return rep


def _summary_markdown(t4, reports: dict, pools: list[str], pair) -> str:
    md = [f"# Loci Similes runs ({time.strftime('%Y-%m-%d %H:%M')})", "", "## Table 4", R.table4_markdown(t4)]
    for pool in pools:
        reps = [r for (n, pl), r in reports.items() if pl == pool]
        if reps:
            md += ["", f"## Table 8 shape, pool = {pool} ({reps[0]['pool']['n_sources']} sources)",
                   R.table8_markdown(reps), "", f"## Table 2 shape, pool = {pool}", R.table2_markdown(reps)]
    if pair:
        md += ["", "## Table 12 shape (BM25-lemma retrieval, lexical-rule reranker)", R.table12_markdown(pair)]
    return "\n".join(md) + "\n"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
