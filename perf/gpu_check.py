"""The neural first stage end to end on whatever device is present (CUDA when there is one, else the CPU).

    .venv/bin/python perf/gpu_check.py [--corpus data/corpus] [--model NAME] [--queries 2000] [--device auto]
    .venv/bin/python perf/gpu_check.py --cpu-smoke     # seconds on any CPU: tiny sizes, the 545 pairs' texts

1. embed every source segment with a small sentence-transformers encoder: ``--model`` (a name in the models
   directory) or, by default, a 2-layer BERT built here with a WordPiece vocabulary trained on the corpus
   (random weights: the speed is real, the ranking is not);
2. exact top-1000 search of the queries over all sources (torch blocks on the device);
3. hybrid fusion with BM25 on lemmas (reciprocal-rank fusion of the two top-1000 lists);

and prints embeddings/s and queries/s for each step. Sized to finish in well under five minutes: on a CPU
the source side is capped by ``--max-sources`` (default 20,000 without CUDA, all with it). ``--cpu-smoke`` runs
every step on the CPU at tiny sizes (2,000 sources, 200 queries, top-100, a 1,000-piece vocabulary; the 545
pairs' texts when no corpus is there), so the script is known to run before a GPU is lent.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from detection.methods import get_retriever  # noqa: E402
from detection.methods.infrastructure import model_store  # noqa: E402
from detection.methods.infrastructure.device import resolve_device  # noqa: E402
from detection.methods.semantic import dense  # noqa: E402
from detection.methods.semantic.encoders import BiEncoderRetriever  # noqa: E402
from detection.methods.semantic.hybrid import fuse  # noqa: E402
from perf.retrieval_bench import load  # noqa: E402
from perf.semantic_bench import _corpus  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default=str(ROOT / "data" / "corpus"))
    p.add_argument("--model", default=None)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--max-sources", type=int, default=None)
    p.add_argument("--device", default="auto")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--cpu-smoke", action="store_true", help="CPU, tiny sizes, seconds: does every step run?")
    a = p.parse_args(argv)
    if a.cpu_smoke:
        a.device, a.queries, a.max_sources = "cpu", min(a.queries, 200), a.max_sources or 2000
    depth = 100 if a.cpu_smoke else 1000
    corpus = _corpus(Path(a.corpus))
    if corpus is None and not a.cpu_smoke:
        print("gpu_check: no corpus (pass --corpus DIR with query.csv/source.csv, or provide ../shared): skipped")
        return 0
    import torch

    device = resolve_device(a.device)
    cuda = device.startswith("cuda")
    if corpus is None:  # the smoke run on the 545 pairs' texts (in the repository)
        from benchmarks.loci import data

        bench = data.load_default_545()
        s_ids, s_texts = [s.seg_id for s in bench.sources], [s.text for s in bench.sources]
        q_texts = [s.text for s in bench.queries]
    else:
        s_ids, s_texts = load(corpus / "source.csv")
        _, q_texts = load(corpus / "query.csv")
    cap = a.max_sources or (len(s_ids) if cuda else 20_000)
    s_ids, s_texts = s_ids[:cap], s_texts[:cap]
    q_texts = q_texts[:: max(1, len(q_texts) // a.queries)][: a.queries]
    name = torch.cuda.get_device_name(0) if cuda else f"CPU ({os.cpu_count()} cores, {torch.get_num_threads()} threads)"
    print(f"device {device}: {name}; {len(s_ids)} sources, {len(q_texts)} queries")
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp)
        model = a.model
        if model is None:
            from tests.tiny_models import build_tiny_bert, build_tiny_sentence_transformer

            t0 = time.perf_counter()
            bert = build_tiny_bert(models / "tiny-bert", s_texts[:5000], vocab_size=1000 if a.cpu_smoke else 4000)
            build_tiny_sentence_transformer(models / "tiny-st", bert)
            model = "tiny-st"
            print(f"built a 2-layer BERT (hidden 64) with a WordPiece vocabulary in {time.perf_counter() - t0:.1f} s")
        ctx = model_store.using(models) if a.model is None else model_store.using(model_store.models_dir())
        with ctx:
            enc = BiEncoderRetriever(model=model, device=device, batch_size=a.batch_size, fp16=True)
            t0 = time.perf_counter()
            enc.fit(s_ids, s_texts)
            if cuda:
                torch.cuda.synchronize()
            t_emb = time.perf_counter() - t0
            print(f"embed      {len(s_ids)} sources in {t_emb:.1f} s: {len(s_ids) / t_emb:,.0f} embeddings/s "
                  f"(fp16: {cuda})")
            t0 = time.perf_counter()
            Q = enc.encode(q_texts)
            d_idx, d_val = dense.torch_topk(Q, enc.S, depth, device=device, half=cuda)
            t_q = time.perf_counter() - t0
            print(f"search     {len(q_texts)} queries (encode + exact top-{depth}) in {t_q:.1f} s: "
                  f"{len(q_texts) / t_q:,.0f} queries/s")
    t0 = time.perf_counter()
    bm25 = get_retriever("bm25-lemma").fit(s_ids, s_texts)
    lex = bm25.search(q_texts, depth)
    t_lex = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(len(q_texts)):
        cand = np.union1d(lex.indices[i][lex.indices[i] >= 0], d_idx[i][d_idx[i] >= 0])
        ls = dict(zip(lex.indices[i].tolist(), lex.scores[i].tolist()))
        ds = dict(zip(d_idx[i].tolist(), d_val[i].tolist()))
        fused = fuse(np.array([ls.get(c, np.nan) for c in cand]), np.array([ds.get(c, np.nan) for c in cand]), 0.5,
                     "rrf")
        _ = cand[np.argsort(-fused)[:100]]
    t_f = time.perf_counter() - t0
    print(f"hybrid     bm25-lemma index + top-{depth} {t_lex:.1f} s; RRF fusion of the two lists {t_f:.1f} s: "
          f"{len(q_texts) / (t_lex + t_f + t_q):,.0f} queries/s end to end (after the source embeddings)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
