"""GPU check of the supervised second stage: fine-tune a cross-encoder for one epoch on one fold of Loci Similes,
rerank the top-k of every held-out query, print pairs/s and the projected cost of reranking 85k queries × top-100,
beside the feature-classifier reranker (the CPU baseline) measured in the same run.

    .venv/bin/python perf/gpu_check_rerank.py                     # GPU: a small BERT (4 layers, 256 wide), top-100
    .venv/bin/python perf/gpu_check_rerank.py --cpu-smoke         # CPU smoke run: tiny BERT, capped steps, top-20
                                                                  # (--cpu: the same)
    .venv/bin/python perf/gpu_check_rerank.py --model NAME        # a model in the models directory / a hub id

No hub is reachable on the check machines, so by default the encoder is built here (WordPiece trained on the
545 pairs' texts, random initial weights): its throughput is what a model of that size costs, its quality is not
the paper's (for that run `POST /api/v1/models/` with kind cross-encoder and base_model xlm-roberta-large).
Writes ``gpu_check_rerank.json`` to ``$OUT`` when that is set.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOTAL_QUERIES, TOTAL_K = 85_254, 100  # the paper's query side × top-100


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--cpu-smoke", "--cpu", dest="cpu", action="store_true",
                   help="CPU smoke run: tiny model, capped steps, top-20 (seconds to minutes)")
    p.add_argument("--model", default=None, help="a model name in the models directory or a hub id")
    p.add_argument("--k", type=int, default=None)
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    a = p.parse_args(argv)

    from benchmarks.loci import data, method_adapters, splits
    from benchmarks.loci.rerank_eval import gold_classes
    from detection.methods import registry
    from detection.methods.infrastructure import model_store
    from detection.methods.rerank import cross_encoder as CE
    from detection.methods.rerank import pipeline as P
    from detection.methods.rerank.tiny import build_tiny_bert

    device = "cpu" if a.cpu else "auto"
    k = a.k or (20 if a.cpu else 100)
    bench = data.load_default_545()
    split = splits.split_from_file(bench, "ref_type")
    queries = [q for f in range(split.n_folds) for q in split.fold_queries(f)]
    qseg = {s.seg_id: s for s in bench.queries}
    pool, s_texts = [s.seg_id for s in bench.sources], [s.text for s in bench.sources]
    q_texts = [qseg[q].text for q in queries]
    r = method_adapters.EngineRetrieverMethod("bm25-lemma")
    r.fit(pool, s_texts)
    idx, sc = r.search(queries, q_texts, k)
    cands = P.from_topk(queries, q_texts, pool, s_texts, idx, sc)
    gold = gold_classes(bench)
    y = cands.labels(gold)
    qfold = np.asarray([split.query_fold[q] for q in queries])[cands.qi]
    train_rows, test_rows = np.nonzero(qfold != a.fold)[0], np.nonzero(qfold == a.fold)[0]
    train_queries = {q for q, f in split.query_fold.items() if f != a.fold}
    work = Path(tempfile.mkdtemp(prefix="gpu_check_rerank_"))
    if a.model:
        base = model_store.resolve(a.model)
    else:
        size = {"hidden": 32, "layers": 2, "heads": 2} if a.cpu else {"hidden": 256, "layers": 4, "heads": 4}
        base = str(build_tiny_bert(work / "base", [s.text for s in bench.queries + bench.sources], vocab_size=8000,
                                   **size))
    out = {"device_asked": device, "k": k, "fold": a.fold, "base": a.model or f"built here {size}",
           "n_train_candidates": int(train_rows.size), "n_test_pairs": int(test_rows.size)}

    # feature-classifier baseline, same fold, same candidates
    t = time.perf_counter()
    fr = registry.build("feature-logreg", {})
    fr.prepare(s_texts)
    X = fr.features(cands)
    t_feat = time.perf_counter() - t
    fr.fit(cands.subset(train_rows), y[train_rows], X=X[train_rows])
    t = time.perf_counter()
    fr.predict_proba(cands.subset(test_rows), X=fr.features(cands.subset(test_rows)))
    feat_rate = test_rows.size / (time.perf_counter() - t)
    out["feature_logreg"] = {"features_all_s": t_feat, "rerank_pairs_per_s": feat_rate}

    Q, C, Y = CE.training_pairs(cands, y, train_rows, gold, train_queries, 4, 42)
    t = time.perf_counter()
    summary = CE.train(base_model=base, queries=Q, candidates=C, labels=Y, out_dir=work / "ce",
                       options=CE.CrossEncoderOptions(
                           epochs=1, batch_size=a.batch_size,
                           effective_batch=64 if 64 % a.batch_size == 0 else a.batch_size,
                           max_length=a.max_length, device=device, max_steps=20 if a.cpu else None),
                       log=lambda line: print("  " + line, flush=True))
    out["train"] = {"pairs": len(Y), "seconds": time.perf_counter() - t, **{key: summary[key] for key in (
        "steps", "pairs_per_s", "device", "mixed_precision", "final_loss", "batch_size", "accumulation")}}
    tok, model, _ = CE.load(work / "ce", summary["device"])
    sub = cands.subset(test_rows)
    qs, cs = [sub.query_texts[i] for i in sub.qi], [sub.source_texts[j] for j in sub.si]
    CE.predict_proba(tok, model, qs[:64], cs[:64], max_length=a.max_length, device=summary["device"])  # warm-up
    if summary["device"].startswith("cuda"):
        import torch
        torch.cuda.synchronize()
    t = time.perf_counter()
    probs = CE.predict_proba(tok, model, qs, cs, batch_size=256, max_length=a.max_length, device=summary["device"])
    if summary["device"].startswith("cuda"):
        import torch
        torch.cuda.synchronize()
    rate = len(qs) / (time.perf_counter() - t)
    hours = TOTAL_QUERIES * TOTAL_K / rate / 3600
    out["rerank"] = {"pairs": len(qs), "pairs_per_s": rate, "projected_85k_x_top100_hours": hours,
                     "ratio_vs_feature_logreg": rate / feat_rate}
    mrr = {}
    for stage, order in (("retrieval", None), ("cross_encoder", P.reranked_topk(sub, probs)[0])):
        rr = []
        for q in np.unique(sub.qi):
            if order is None:
                m = sub.qi == q
                ranked = sub.si[m][np.argsort(sub.rank[m])]
            else:
                ranked = order[q][order[q] >= 0]
            hit = next((i for i, j in enumerate(ranked[:10], 1) if (sub.query_ids[q], sub.source_ids[j]) in gold),
                       None)
            rr.append(1 / hit if hit else 0.0)
        mrr[stage] = float(np.mean(rr))
    out["held_out_mrr@10"] = mrr
    print(f"device {summary['device']} (mixed precision {summary['mixed_precision']}), base {out['base']}")
    print(f"train: {len(Y)} pairs, {summary['steps']} steps, {summary['pairs_per_s']:.1f} pairs/s")
    print(f"rerank: {len(qs)} held-out pairs at {rate:.1f} pairs/s; feature-logreg {feat_rate:.1f} pairs/s "
          f"(cross-encoder / feature-logreg = {rate / feat_rate:.3f}×)")
    print(f"projected: {TOTAL_QUERIES} queries × top-{TOTAL_K} = {TOTAL_QUERIES * TOTAL_K:,} pairs → {hours:.2f} h")
    print(f"held-out fold {a.fold} MRR@10 (gold pool, top-{k}): retrieval {mrr['retrieval']:.3f}, "
          f"cross-encoder {mrr['cross_encoder']:.3f} (random-init encoder unless --model: not a quality figure)")
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "gpu_check_rerank.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
