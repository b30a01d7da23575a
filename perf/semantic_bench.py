"""Speed and memory of the semantic first stage, with ratios against the alternatives measured in the same run.

    .venv/bin/python perf/semantic_bench.py [--corpus data/corpus] [--model la-lemma-cbow200] [--queries 1000]

Figures (each measurement in a forked child, so wall time and peak RSS are its own):

- training: the named model's recorded training time (manifest) and a small model trained here on the source
  side (Word2Vec CBOW dim 100, 1 epoch) with its words/s;
- encoding: SIF segment vectors per second with the corpus model; contextual token vectors per second with the
  tiny 2-layer BERT the tests build (CPU);
- exact dense search of the queries against every source segment (k = 100): numpy blocks vs faiss
  ``IndexFlatIP`` (ratio numpy / faiss; the target is ≤ 1.2), at the model's dimension and at 384;
- hybrid overhead: ``hybrid`` (BM25 top-1000 + MaxSim rescoring) vs ``bm25-lemma`` alone, same queries;
- peak memory per 100k segments of a static-dense index.

Without a corpus (no ``--corpus`` folder and no ``../shared`` to build one from) it says so and exits 0.
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
from detection.methods.semantic import dense  # noqa: E402
from detection.methods.semantic.word_vectors import TrainConfig, WordVectors, load_vectors, train_word_vectors  # noqa: E402
from perf.retrieval_bench import load, measure  # noqa: E402


def _corpus(path: Path) -> Path | None:
    if (path / "source.csv").is_file():
        return path
    texts = ROOT.parent / "shared" / "data" / "latin_texts"
    if not texts.is_dir():
        texts = Path("/work/shared/data/latin_texts")
    if not texts.is_dir():
        return None
    from detection.latin.loci_corpus import build_corpus

    build_corpus(texts, path)
    return path


def _rss_now() -> float:
    """Resident set size of this process now, MiB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def bench_training(s_texts, model_name):
    from detection.latin.analysis import Analyzer

    docs = Analyzer("lemma", 1, stopwords=False)(s_texts)
    words = sum(map(len, docs))
    t0 = time.perf_counter()
    train_word_vectors(docs, TrainConfig(dim=100, epochs=1, min_count=3, workers=2))
    secs = time.perf_counter() - t0
    try:
        m = load_vectors(model_name).manifest
        rec = f"{model_name}: {m['train_seconds']} s for {m['epochs']} epochs over {m['corpus'].get('tokens')} units"
    except Exception as exc:  # noqa: BLE001 - reported, the rest still runs
        rec = f"{model_name}: not available ({exc})"
    print(f"training   here: Word2Vec CBOW dim 100, 1 epoch, {words} source lemmas: {secs:.1f} s "
          f"({words / secs:,.0f} words/s); recorded: {rec}")


def bench_encoding(s_texts, wv: WordVectors):
    from detection.methods.semantic.hybrid import StaticDenseRetriever

    def sif():
        start = _rss_now()
        r = StaticDenseRetriever(vectors=wv, scheme="sif").fit([str(i) for i in range(len(s_texts))], s_texts)
        return r.S.shape, start

    wall, rss, (shape, start) = measure(sif)
    grown = rss - start
    print(f"encoding   SIF ({wv.dim}-d corpus vectors): {shape[0]} segments in {wall:.1f} s = {shape[0] / wall:,.0f} "
          f"segments/s (lemmatising included); peak RSS {rss:.0f} MiB, {grown:.0f} MiB above the process at start "
          f"= {grown * 1e5 / shape[0]:.0f} MiB per 100k segments")
    sample = s_texts[:2000]

    def tiny():
        import torch

        torch.set_num_threads(2)
        from detection.methods.semantic.encoders import TokenMaxSimRetriever
        from tests.tiny_models import build_tiny_bert

        with tempfile.TemporaryDirectory() as d, model_store.using(d):
            build_tiny_bert(Path(d) / "tiny", sample[:500], vocab_size=2000)
            r = TokenMaxSimRetriever(model="tiny", device="cpu", batch_size=64)
            t0 = time.perf_counter()
            r.fit([str(i) for i in range(len(sample))], sample)
            return time.perf_counter() - t0

    wall, rss, secs = measure(tiny)
    print(f"encoding   tiny 2-layer BERT token vectors (CPU, 2 threads): {len(sample)} segments in {secs:.1f} s = "
          f"{len(sample) / secs:,.0f} segments/s")


def bench_search(n_sources: int, n_queries: int, dim: int, k: int = 100):
    rng = np.random.default_rng(0)
    S = rng.normal(size=(n_sources, dim)).astype(np.float32)
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    Q = rng.normal(size=(n_queries, dim)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    t_np, rss_np, (a, _) = measure(lambda: dense.exact_topk(Q, S, k))
    if dense.has_faiss():
        t_fa, rss_fa, (b, _) = measure(lambda: dense.faiss_topk(Q, S, k))
        agree = float((a[:, :10] == b[:, :10]).mean())
        print(f"search     exact top-{k}, {n_queries} × {n_sources}, dim {dim}: numpy blocks {t_np:.2f} s "
              f"({rss_np:.0f} MiB), faiss IndexFlatIP {t_fa:.2f} s ({rss_fa:.0f} MiB): ratio numpy/faiss "
              f"{t_np / t_fa:.2f}; same top-10 ids {agree:.3f}")
    else:
        print(f"search     exact top-{k}, {n_queries} × {n_sources}, dim {dim}: numpy blocks {t_np:.2f} s "
              f"(faiss not installed)")


def bench_hybrid(s_ids, s_texts, q_texts, model_name):
    def run(name, **params):
        def fn():
            r = get_retriever(name, **params).fit(s_ids, s_texts)
            t0 = time.perf_counter()
            r.search(q_texts, 100)
            return time.perf_counter() - t0
        return fn

    t_b, rss_b, s_b = measure(run("bm25-lemma"))
    t_h, rss_h, s_h = measure(run("hybrid", model=model_name, weight=0.5))
    print(f"hybrid     {len(q_texts)} queries × {len(s_ids)} sources, top-100: bm25-lemma search {s_b:.1f} s "
          f"(wall incl. index {t_b:.1f} s, {rss_b:.0f} MiB); hybrid maxsim over the BM25 top-1000 search {s_h:.1f} s "
          f"(wall {t_h:.1f} s, {rss_h:.0f} MiB): overhead ×{t_h / t_b:.2f} wall, ×{s_h / max(s_b, 1e-9):.1f} search")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default=str(ROOT / "data" / "corpus"))
    p.add_argument("--model", default="la-lemma-cbow200")
    p.add_argument("--queries", type=int, default=1000)
    a = p.parse_args(argv)
    corpus = _corpus(Path(a.corpus))
    if corpus is None:
        print("semantic_bench: no corpus (pass --corpus DIR with query.csv/source.csv, or provide ../shared): skipped")
        return 0
    model_store.configure(os.environ.get("SIMILIA_MODELS_DIR") or ROOT / "var" / "models")
    s_ids, s_texts = load(corpus / "source.csv")
    _, q_texts = load(corpus / "query.csv")
    q_texts = q_texts[:: max(1, len(q_texts) // a.queries)][: a.queries]
    print(f"corpus {corpus}: {len(s_ids)} sources, {len(q_texts)} queries; cores {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.1f}")
    try:
        wv = load_vectors(a.model)
    except Exception as exc:  # noqa: BLE001
        print(f"model {a.model!r} not available ({exc}): train it with manage.py train_embeddings; skipping the "
              f"model-dependent figures")
        wv = None
    bench_training(s_texts, a.model)
    if wv is not None:
        bench_encoding(s_texts, wv)
    bench_search(len(s_ids), len(q_texts), wv.dim if wv is not None else 200)
    bench_search(len(s_ids), len(q_texts), 384)
    if wv is not None:
        bench_hybrid(s_ids, s_texts, q_texts, a.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
