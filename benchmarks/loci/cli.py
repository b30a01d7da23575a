"""Command-line entry points (no Django needed)::

    python -m benchmarks.loci.cli evaluate_retrieval --queries Q.csv --sources S.csv --gold G.csv \
        --retriever bm25-lemma --k 10,100,1000 --output report.json
    python -m benchmarks.loci.cli loci545 --retriever bm25-lemma [--corpus-dir DIR] [--pool corpus] \
        [--split ref_type|with_text|grouped] --output report.json [--csv per_query.csv] [--svg DIR]

``manage.py evaluate_retrieval`` calls :func:`run_evaluate_retrieval` with the same options.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import data, matching, methods, report as R, splits
from .evaluate import evaluate_retrieval
from .metrics import DEFAULT_KS


def parse_ks(text: str) -> tuple[int, ...]:
    ks = tuple(sorted({int(x) for x in str(text).replace(" ", "").split(",") if x}))
    if not ks or min(ks) < 1:
        raise ValueError(f"bad --k {text!r}")
    return ks


def _make_split(bench, split: str, folds: int, seed: int):
    if split == "grouped":
        return splits.grouped_kfold(bench, folds, seed)
    if split == "auto":
        name = "ref_type" if "ref_type" in bench.file_folds else ("file" if "file" in bench.file_folds else None)
        return splits.split_from_file(bench, name) if name else splits.grouped_kfold(bench, folds, seed)
    return splits.split_from_file(bench, split)


def _write_outputs(rep: dict, output=None, csv_path=None, svg_dir=None, stdout=None):
    stdout = stdout or sys.stdout
    text = json.dumps(rep, indent=1, ensure_ascii=False)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    if csv_path:
        Path(csv_path).write_text(R.per_query_csv(rep), encoding="utf-8")
    if svg_dir:
        from . import plots
        d = Path(svg_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / "recall_at_k.svg").write_text(plots.recall_curve_svg([rep]), encoding="utf-8")
    ks = rep["ks"]
    line = "  ".join(f"R@{k}={rep[f'recall@{k}']:.3f}" for k in ks if rep.get(f"recall@{k}") is not None)
    stdout.write(f"{rep['method']['name']} [{rep['pool']['kind']}, {rep['pool']['n_sources']} sources, "
                 f"{rep['pool']['n_queries']} queries]: {line}\n")


def run_evaluate_retrieval(*, queries, sources, gold, retriever: str, k="10,100,1000", output=None,
                           split: str = "auto", folds: int = 5, seed: int = 0, pool: str = "auto",
                           ties: str = "as_ranked", csv=None, svg=None, stdout=None, params: dict | None = None) -> dict:
    """Evaluate a retriever on plain files (no database).

    Args:
        queries, sources: corpora ``seg_id,text[,author,work]``.
        gold: ``query_id,source_id[,label][,fold]``.
        retriever: a name of the engine registry (``bm25-lemma``, ``tfidf-surface``, ...).
        k: comma-separated cut-offs.
        split: ``auto`` (the gold file's folds if it has a fold column, else grouped), ``grouped`` or ``file``.
        pool: ``auto``/``gold``/``corpus``.

    Returns:
        the report (also written to ``output`` as JSON when given); it has pooled ``recall@K``/``mrr@K`` at the
        top level and ``by_type`` sections.
    """
    bench = data.benchmark_from_files(queries, sources, gold)
    chk = matching.check_gold_ids(bench)
    if not chk["ok"]:
        raise SystemExit(f"gold ids not in the corpora: {len(chk['missing_query_ids'])} query ids, "
                         f"{len(chk['missing_source_ids'])} source ids (e.g. "
                         f"{(chk['missing_query_ids'] + chk['missing_source_ids'])[:3]})")
    sp = _make_split(bench, split, folds, seed)
    m = methods.EngineRetrieverMethod(retriever, **(params or {}))
    rep = evaluate_retrieval(bench, sp, m, ks=parse_ks(k), pool=pool, ties=ties, seed=seed)
    _write_outputs(rep, output, csv, svg, stdout)
    return rep


def load_545_with_corpus(corpus_dir=None, data_dir=None):
    """The 545-pair benchmark, attached to ``corpus_dir/{query,source}.csv`` when given. Returns
    (benchmark, match report or None)."""
    bench = data.load_default_545(data_dir)
    if not corpus_dir:
        return bench, None
    qc, sc = data.read_corpus_dir(corpus_dir)
    return matching.attach_corpus(bench, qc, sc)


def run_loci545(*, retriever: str, k=",".join(map(str, DEFAULT_KS)), output=None, corpus_dir=None,
                data_dir=None, split="ref_type", folds=5, seed=0, pool="auto", csv=None, svg=None, stdout=None) -> dict:
    bench, match = load_545_with_corpus(corpus_dir, data_dir)
    sp = _make_split(bench, split, folds, seed)
    fold_pools = splits.build_fold_pools(bench, sp, seed=seed) if pool == "gold+distractors" else None
    m = methods.EngineRetrieverMethod(retriever)
    rep = evaluate_retrieval(bench, sp, m, ks=parse_ks(k), pool=pool, fold_pools=fold_pools, seed=seed)
    if match:
        rep["match_report"] = match
    _write_outputs(rep, output, csv, svg, stdout)
    return rep


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.cli")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("evaluate_retrieval", help="evaluate a retriever on plain files")
    add_evaluate_retrieval_arguments(e)
    b = sub.add_parser("loci545", help="evaluate a retriever on the 545-pair benchmark")
    b.add_argument("--retriever", required=True)
    b.add_argument("--k", default=",".join(map(str, DEFAULT_KS)))
    b.add_argument("--output")
    b.add_argument("--corpus-dir")
    b.add_argument("--data-dir")
    b.add_argument("--split", default="ref_type")
    b.add_argument("--folds", type=int, default=5)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--pool", default="auto", choices=["auto", "gold", "gold+distractors", "corpus"])
    b.add_argument("--csv")
    b.add_argument("--svg")
    return p


def add_evaluate_retrieval_arguments(e):
    e.add_argument("--queries", required=True)
    e.add_argument("--sources", required=True)
    e.add_argument("--gold", required=True)
    e.add_argument("--retriever", required=True)
    e.add_argument("--k", default="10,100,1000")
    e.add_argument("--output")
    e.add_argument("--split", default="auto", choices=["auto", "grouped", "file"])
    e.add_argument("--folds", type=int, default=5)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--pool", default="auto", choices=["auto", "gold", "corpus"])
    e.add_argument("--ties", default="as_ranked", choices=["as_ranked", "pessimistic", "optimistic"])
    e.add_argument("--csv")
    e.add_argument("--svg")


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    if a.cmd == "evaluate_retrieval":
        run_evaluate_retrieval(queries=a.queries, sources=a.sources, gold=a.gold, retriever=a.retriever, k=a.k,
                               output=a.output, split=a.split, folds=a.folds, seed=a.seed, pool=a.pool, ties=a.ties,
                               csv=a.csv, svg=a.svg)
    else:
        run_loci545(retriever=a.retriever, k=a.k, output=a.output, corpus_dir=a.corpus_dir, data_dir=a.data_dir,
                    split=a.split, folds=a.folds, seed=a.seed, pool=a.pool, csv=a.csv, svg=a.svg)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
