"""Leaderboard: several registry methods on one gold set, each fitted on the same training corpus.

    python -m benchmarks.greek_sts.leaderboard --gold STS.tsv [--method NAME ...] [--calibration linear] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from .evaluate import evaluate_method
from .gold_files import read_sts_gold
from .training_texts import default_corpus_paths, training_corpus

DEFAULT_METHODS = ("levenshtein", "char_ngram", "word2vec_sg", "word2vec_cbow", "word2vec_sg_lemma",
                   "word2vec_cbow_lemma", "fasttext", "fasttext_lemma", "semantic_edit", "semantic_edit_w2v_lemma",
                   "semantic_edit_directional")


def run_leaderboard(gold_path, methods=DEFAULT_METHODS, corpus_paths=None, calibration=None, params=None) -> list[dict]:
    """One row per method: rmse, spearman, pearson, per-reference RMSE, directionality flag, seconds."""
    from detection.methods.greek.greek_registry import get_method

    pairs = read_sts_gold(gold_path)
    texts = training_corpus(corpus_paths or default_corpus_paths(gold_path))
    rows = []
    for name in methods:
        t0 = time.perf_counter()
        m = get_method(name, **(params or {}).get(name, {})).fit(texts)
        rep = evaluate_method(pairs, m, calibration=calibration)
        rows.append({"method": name, "rmse": rep["rmse"], "spearman": rep["spearman"], "pearson": rep["pearson"],
                     "rmse_per_reference": {k: v["rmse"] for k, v in rep["per_reference"].items()},
                     "spearman_per_reference": {k: v["spearman"] for k, v in rep["per_reference"].items()},
                     "reproduces_directionality": rep["directionality"]["reproduces_directionality"],
                     "direction_agreement": rep["directionality"]["direction_agreement"],
                     "seconds": time.perf_counter() - t0, "n_training_texts": len(texts)})
    return sorted(rows, key=lambda r: r["rmse"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.greek_sts.leaderboard")
    ap.add_argument("--gold", required=True)
    ap.add_argument("--method", action="append", default=None)
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--calibration", choices=["none", "linear", "isotonic"], default="none")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rows = run_leaderboard(a.gold, a.method or DEFAULT_METHODS, a.corpus,
                           None if a.calibration == "none" else a.calibration)
    refs = list(rows[0]["rmse_per_reference"]) if rows else []
    print("| method | RMSE | Spearman | Pearson | " + " | ".join(f"RMSE {r}" for r in refs) + " | dir. | s |")
    print("|---" * (6 + len(refs)) + "|")
    for r in rows:
        per = " | ".join(f"{r['rmse_per_reference'][k]:.3f}" for k in refs)
        print(f"| {r['method']} | {r['rmse']:.3f} | {r['spearman']:.3f} | {r['pearson']:.3f} | {per} | "
              f"{'yes' if r['reproduces_directionality'] else 'no'} | {r['seconds']:.1f} |")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, ensure_ascii=False, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
