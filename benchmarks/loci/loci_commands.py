"""Command-line entry points (no Django needed)::

    python -m benchmarks.loci.loci_commands evaluate_retrieval --queries Q.csv --sources S.csv --gold G.csv \
        --method bm25-lemma [--param k1=1.2] --ks 10,100,1000 --output report.json
    python -m benchmarks.loci.loci_commands loci545 --method bm25-lemma [--corpus-dir DIR] [--pool corpus] \
        [--split ref_type|with_text|grouped] --output report.json [--csv per_query.csv] [--svg DIR]
    python -m benchmarks.loci.loci_commands evaluate_retrieval --method list

``manage.py evaluate_retrieval`` calls :func:`evaluate_retrieval_command` with the same options (the project's
command-line convention, :mod:`core.cli`; bad input raises :class:`core.cli.CommandInputError`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.cli import (
    CommandInputError,
    add_method_arguments,
    method_command,
    parse_ks,
    parse_params,
    user_errors,
)
from detection.methods import ParamError, UnknownMethod, registry

from . import data, matching, method_adapters, splits
from . import report as R
from .evaluate import evaluate_retrieval
from .metrics import DEFAULT_KS

# what a bad file, split, method or parameter raises below; shown as one line by the commands
_USER_ERRORS = (OSError, ValueError, KeyError, ParamError, UnknownMethod)


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


def run_evaluate_retrieval(*, queries, sources, gold, method: str, ks="10,100,1000", output=None,
                           split: str = "auto", folds: int = 5, seed: int = 0, pool: str = "auto",
                           ties: str = "as_ranked", csv=None, svg=None, stdout=None, params: dict | None = None) -> dict:
    """Evaluate a retriever on plain files (no database).

    Args:
        queries, sources: corpora ``seg_id,text[,author,work]``.
        gold: ``query_id,source_id[,label][,fold]``.
        method: a retriever of the method registry (``bm25-lemma``, ``tfidf-surface``, ...); ``params`` its
            parameters (validated by the registry).
        ks: comma-separated cut-offs.
        split: ``auto`` (the gold file's folds if it has a fold column, else grouped), ``grouped`` or ``file``.
        pool: ``auto``/``gold``/``corpus``.

    Returns:
        the report (also written to ``output`` as JSON when given); it has pooled ``recall@K``/``mrr@K`` at the
        top level and ``by_type`` sections.
    """
    cutoffs = parse_ks(ks)
    with user_errors(*_USER_ERRORS):
        registry.validate(method, params, kind="retriever")
        bench = data.benchmark_from_files(queries, sources, gold)
    chk = matching.check_gold_ids(bench)
    if not chk["ok"]:
        raise CommandInputError(f"gold ids not in the corpora: {len(chk['missing_query_ids'])} query ids, "
                                f"{len(chk['missing_source_ids'])} source ids (e.g. "
                                f"{(chk['missing_query_ids'] + chk['missing_source_ids'])[:3]})")
    with user_errors(*_USER_ERRORS):
        sp = _make_split(bench, split, folds, seed)
    m = method_adapters.EngineRetrieverMethod(method, **(params or {}))
    rep = evaluate_retrieval(bench, sp, m, ks=cutoffs, pool=pool, ties=ties, seed=seed)
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


def run_loci545(*, method: str, ks=",".join(map(str, DEFAULT_KS)), output=None, corpus_dir=None,
                data_dir=None, split="ref_type", folds=5, seed=0, pool="auto", csv=None, svg=None, stdout=None,
                params: dict | None = None) -> dict:
    cutoffs = parse_ks(ks)
    with user_errors(*_USER_ERRORS):
        registry.validate(method, params, kind="retriever")
        bench, match = load_545_with_corpus(corpus_dir, data_dir)
        sp = _make_split(bench, split, folds, seed)
    fold_pools = splits.build_fold_pools(bench, sp, seed=seed) if pool == "gold+distractors" else None
    m = method_adapters.EngineRetrieverMethod(method, **(params or {}))
    rep = evaluate_retrieval(bench, sp, m, ks=cutoffs, pool=pool, fold_pools=fold_pools, seed=seed)
    if match:
        rep["match_report"] = match
    _write_outputs(rep, output, csv, svg, stdout)
    return rep


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.loci_commands")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("evaluate_retrieval", help="evaluate a retriever on plain files")
    add_evaluate_retrieval_arguments(e)
    b = sub.add_parser("loci545", help="evaluate a retriever on the 545-pair benchmark")
    add_method_arguments(b, what="retriever")
    b.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)), help="comma-separated cut-offs")
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
    e.add_argument("--queries")
    e.add_argument("--sources")
    e.add_argument("--gold")
    add_method_arguments(e, what="retriever")
    e.add_argument("--ks", default="10,100,1000", help="comma-separated cut-offs")
    e.add_argument("--output")
    e.add_argument("--split", default="auto", choices=["auto", "grouped", "file"])
    e.add_argument("--folds", type=int, default=5)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--pool", default="auto", choices=["auto", "gold", "corpus"])
    e.add_argument("--ties", default="as_ranked", choices=["as_ranked", "pessimistic", "optimistic"])
    e.add_argument("--csv")
    e.add_argument("--svg")


def evaluate_retrieval_command(options: dict, *, stdout=None) -> dict | None:
    """``evaluate_retrieval`` from parsed options (shared by ``python -m`` and ``manage.py evaluate_retrieval``)."""
    if not method_command(options, required=("queries", "sources", "gold"), stdout=stdout or sys.stdout,
                          listing=lambda: registry.format_specs(kind="retriever", language="la")):
        return None
    return run_evaluate_retrieval(
        queries=options["queries"], sources=options["sources"], gold=options["gold"], method=options["method"],
        params=parse_params(options["param"]), ks=options["ks"], output=options["output"], split=options["split"],
        folds=options["folds"], seed=options["seed"], pool=options["pool"], ties=options["ties"],
        csv=options["csv"], svg=options["svg"], stdout=stdout)


def main(argv=None) -> int:
    a = vars(build_parser().parse_args(argv))
    try:
        if a.pop("cmd") == "evaluate_retrieval":
            evaluate_retrieval_command(a)
        elif a["method"] == "list":
            sys.stdout.write(registry.format_specs(kind="retriever", language="la"))
        else:
            a["params"] = parse_params(a.pop("param"))
            run_loci545(**a)
    except CommandInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
