"""Quality of Similia's own pretrained encoders, beside the baselines measured in the same run.

    .venv/bin/python perf/encoder_eval.py --latin similia-la-small --greek similia-grc-small \
        [--sts STS_benchmark_medievalGreek.tsv] [--threads 1]

- **Latin** (``--latin NAME``): the 545 Loci Similes pairs, the ``ref_type`` folds, the gold sources as the pool
  (408 segments; encoding the 87,783-segment whole corpus is not affordable on a shared CPU): ``dense-encoder``
  with the pretrained model as it is (mean pooling, no fine-tuning) against ``bm25-lemma``; R@10, R@100, MRR@10,
  ``cit.``/``cf.`` R@10, mean over the 5 folds.
- **Greek** (``--greek NAME``): the 296 DBBE STS pairs; ``contextual`` (the model's last layer, mean over tokens),
  raw and linear-calibrated (leave one reference out) RMSE and Spearman, against ``char_ngram`` in the same run
  (today's corpus vectors, 0.381 Spearman / 0.232 calibrated RMSE, need ``grc-lemma-cbow200``, which is not here).

Models are names in ``SIMILIA_MODELS_DIR``. Writes ``encoder_eval.json`` to ``$OUT`` when that is set.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def latin_rows(model: str) -> list[dict]:
    from benchmarks.loci import data, method_adapters, splits
    from benchmarks.loci.evaluate import evaluate_retrieval

    bench = data.load_default_545()
    split = splits.split_from_file(bench, "ref_type")
    rows = []
    for label, name, params in (("bm25-lemma", "bm25-lemma", {}),
                                (f"dense-encoder {model} (pretrained, not fine-tuned)", "dense-encoder",
                                 {"model": model, "device": "cpu"})):
        t = time.perf_counter()
        rep = evaluate_retrieval(bench, split, method_adapters.EngineRetrieverMethod(name, **params), pool="gold",
                                 ks=(1, 10, 100))
        bt = rep["by_type"]
        rows.append({"method": label, "R@10": rep["recall@10"], "R@100": rep["recall@100"], "MRR@10": rep["mrr@10"],
                     "cit. R@10": bt["cit."]["recall@10"], "cf. R@10": bt["cf."]["recall@10"],
                     "seconds": time.perf_counter() - t})
    return rows


def greek_rows(model: str, sts) -> list[dict]:
    from benchmarks.greek_sts.sts_commands import run_evaluate

    rows = []
    for label, method, params in (("char_ngram", "char_ngram", {}),
                                  (f"contextual {model} (pretrained)", "contextual", {"model": model, "device": "cpu"})):
        t = time.perf_counter()
        with open(os.devnull, "w") as sink:
            rep = run_evaluate(gold=sts, method=method, params=params, calibration="linear", output=None,
                               quiet=True, stdout=sink, stderr=sink)
        rows.append({"method": label, "Spearman raw": rep["raw"]["spearman"], "Spearman calibrated": rep["spearman"],
                     "Pearson": rep["pearson"],
                     "RMSE raw": rep["raw"]["rmse"], "RMSE calibrated": rep["rmse"],
                     "seconds": time.perf_counter() - t})
    return rows


def _table(rows: list[dict]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append("| " + " | ".join(f"{r[k]:.3f}" if isinstance(r[k], float) else str(r[k]) for k in keys) + " |")
    return "\n".join(out)


def main(argv=None) -> int:
    from core.paths import shared_data_dir

    p = argparse.ArgumentParser()
    p.add_argument("--latin", default=None, help="a pretrained Latin model's name")
    p.add_argument("--greek", default=None, help="a pretrained Greek model's name")
    p.add_argument("--sts", default=str(shared_data_dir() / "dbbe" / "STS_benchmark_medievalGreek.tsv"))
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    import torch
    import transformers

    torch.set_num_threads(a.threads)
    transformers.logging.set_verbosity_error()  # the MLM head a mean-pooling encoder does not load is expected
    report = {"threads": a.threads}
    if a.latin:
        report["latin"] = latin_rows(a.latin)
        print("Loci Similes, 545 pairs, gold-source pool, 5 folds\n" + _table(report["latin"]), flush=True)
    if a.greek:
        report["greek"] = greek_rows(a.greek, a.sts)
        print("DBBE STS, 296 pairs\n" + _table(report["greek"]), flush=True)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "encoder_eval.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
