"""Semantic first-stage runs on the 545 pairs: held-out queries of each fold against the whole source corpus::

    python -m benchmarks.loci.semantic_runs --corpus-dir /tmp/loci_corpus --model la-lemma-cbow200 \
        --out /tmp/semantic_runs [--only bm25-lemma,hybrid-maxsim]

Every configuration below runs with the same folds (the ``ref_type`` file's) and the same pool. Methods with an
unset fusion weight tune it per fold on the *other* folds' links (``EngineRetrieverMethod`` calls the
retriever's ``tune``); nothing is chosen on the held-out fold. Writes one JSON report per configuration and
``semantic_summary.md`` (pooled and per-type recall/MRR, mean over folds).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from . import method_adapters, splits
from .evaluate import evaluate_retrieval
from .loci_commands import load_545_with_corpus


def configurations(model: str) -> list[tuple[str, str, dict]]:
    """(label, registry name, parameters) of every run."""
    h = {"model": model}
    return [
        ("bm25-lemma", "bm25-lemma", {}),
        ("static-dense sif", "static-dense", {**h, "scheme": "sif"}),
        ("static-dense usif", "static-dense", {**h, "scheme": "usif"}),
        ("w2v-bigram (corpus vectors)", "w2v-bigram", {"vectors": model}),
        ("hybrid sif union (tuned w)", "hybrid", {**h, "semantic": "sif", "candidates": "union"}),
        ("hybrid sif rrf (tuned w)", "hybrid", {**h, "semantic": "sif", "candidates": "union", "fusion": "rrf"}),
        ("hybrid softcos (tuned w)", "hybrid", {**h, "semantic": "softcos"}),
        ("hybrid maxsim (tuned w)", "hybrid", {**h, "semantic": "maxsim"}),
        ("hybrid maxsim (w = 0.5)", "hybrid", {**h, "semantic": "maxsim", "weight": 0.5}),
        ("bm25-surface", "bm25-surface", {}),
        ("hybrid bm25-surface + maxsim (tuned w)", "hybrid", {**h, "semantic": "maxsim", "lexical": "bm25-surface"}),
        ("hybrid maxsim rrf (tuned w)", "hybrid", {**h, "semantic": "maxsim", "fusion": "rrf"}),
    ]


def _row(label, rep) -> str:
    bt = rep["by_type"]
    return (f"| {label} | {rep['recall@10']:.3f} | {rep['recall@100']:.3f} | {rep['recall@1000']:.3f} | "
            f"{rep['mrr@10']:.3f} | {bt['cit.']['recall@10']:.3f} | {bt['cit.']['recall@100']:.3f} | "
            f"{bt['cf.']['recall@10']:.3f} | {bt['cf.']['recall@100']:.3f} | {rep['timing']['total_s']:.0f} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.semantic_runs")
    p.add_argument("--corpus-dir", required=True)
    p.add_argument("--model", default="la-lemma-cbow200")
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="", help="comma-separated labels to run (default: all)")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)  # noqa: E731
    bench, _ = load_545_with_corpus(a.corpus_dir)
    sp = splits.split_from_file(bench, "ref_type")
    only = {s.strip() for s in a.only.split(",") if s.strip()}
    lines = ["| method | R@10 | R@100 | R@1000 | MRR@10 | cit. R@10 | cit. R@100 | cf. R@10 | cf. R@100 | s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for label, name, params in configurations(a.model):
        if only and label not in only:
            continue
        m = method_adapters.EngineRetrieverMethod(name, **params)
        rep = evaluate_retrieval(bench, sp, m, pool="corpus", per_query=True, overlap=False)
        (out / (label.replace(" ", "_").replace("/", "-").replace("(", "").replace(")", "").replace("=", "")
                + ".json")).write_text(json.dumps(rep))
        lines.append(_row(label, rep))
        tuned = [t.get("weight") for t in rep["method"].get("tuning_per_fold", [])]
        log(f"{label}: R@10 {rep['recall@10']:.3f} R@100 {rep['recall@100']:.3f} cf. R@10 "
            f"{rep['by_type']['cf.']['recall@10']:.3f} ({rep['timing']['total_s']:.0f} s)"
            + (f" weights per fold {tuned}" if tuned else ""))
        (out / "semantic_summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
