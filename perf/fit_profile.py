"""Where fitting a pool index goes, phase by phase, in one fresh process, against loading it from the index cache.

    .venv/bin/python perf/fit_profile.py [--corpus data/corpus] [--methods bm25-lemma,tesserae]

For the 87,854 source segments of the corpus (``detection.latin.loci_corpus.build_corpus``) and each method:
tokenising (``tokens_of``; the first call also loads simplemma's Latin dictionary), lemmatising
(``lemmatize_corpus`` with the platform's lemma cache, as the jobs use it), then the rest of ``fit`` (stoplist,
count matrix, weights; Tesserae: lemma counts), each timed on its own; then the cache key (sha256 over the
texts), storing the fitted index in a fresh ``detection.methods.infrastructure.index_cache.IndexCache`` and loading it into a
new retriever (memory-mapped), with the ratio fresh fit / cached load measured in the same run.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--methods", default="bm25-lemma,tesserae")
    args = ap.parse_args()
    from core.paths import shared_data_dir
    from detection.latin.analysis import tokens_of
    from detection.latin.lemmatize import default_cache_dir, lemmatize_corpus
    from detection.methods import registry
    from detection.methods.infrastructure import index_cache

    corpus = Path(args.corpus)
    if not (corpus / "source.csv").exists():
        from detection.latin.loci_corpus import build_corpus

        build_corpus(shared_data_dir() / "latin_texts", corpus)
    with open(corpus / "source.csv", encoding="utf-8") as f:
        rows = [(r["seg_id"], r["text"]) for r in csv.DictReader(f)]
    ids, texts = [i for i, _ in rows], [t for _, t in rows]
    cache_dir = str(default_cache_dir())
    print(f"{len(texts)} source segments; cores {os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}", flush=True)
    t = time.perf_counter()
    toks = tokens_of(texts)
    tok_s = time.perf_counter() - t
    t = time.perf_counter()
    lemmatize_corpus(toks, cache_dir=cache_dir)
    lem_s = time.perf_counter() - t
    t = time.perf_counter()
    tokens_of(texts)
    tok2_s = time.perf_counter() - t
    print(f"tokenising {tok_s:.2f} s (first call, dictionary load included; again: {tok2_s:.2f} s), "
          f"lemmatising {lem_s:.2f} s (lemma cache {cache_dir})", flush=True)
    for method in args.methods.split(","):
        r = registry.build(method, {}, **({"cache_dir": cache_dir} if "cache_dir" in registry.get_spec(method).internal
                                          else {}))
        t = time.perf_counter()
        r.fit(ids, texts)
        fit_s = time.perf_counter() - t
        t = time.perf_counter()
        r.analyzer(texts)
        analyse_s = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as tmp:
            cache = index_cache.IndexCache(tmp, 2 << 30)
            t = time.perf_counter()
            key = index_cache.cache_key(method, {}, ids, texts)
            key_s = time.perf_counter() - t
            t = time.perf_counter()
            cache.store(key, r)
            store_s = time.perf_counter() - t
            fresh = registry.build(method, {})
            t = time.perf_counter()
            assert cache.load(key, fresh)
            load_s = time.perf_counter() - t
            size = cache.size_of(key)
        print(f"{method}: fit {fit_s:.2f} s, of which analysing the texts (tokens, lemmas, stoplist; warm process) "
              f"{analyse_s:.2f} s ({100 * analyse_s / fit_s:.0f} %) and the rest {fit_s - analyse_s:.2f} s; "
              f"cache key {key_s:.2f} s, store {store_s:.2f} s ({size / 2**20:.0f} MiB), cached load {load_s:.3f} s "
              f"= {fit_s / max(load_s, 1e-9):.0f}x faster than the fit; load avg {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
