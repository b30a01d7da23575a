"""Speed of the multi-channel retriever (``channels``, every channel on) against ``bm25-lemma`` alone, same run.

    .venv/bin/python perf/channels_bench.py [--queries 850] [--sources 40000] [--k 1000] [--repeat 1]
    .venv/bin/python perf/channels_bench.py --aeneid-metamorphoses      # the whole Aeneid x Metamorphoses

Queries: the first N lines of Lucan's Bellum Civile 2-10; sources: verse lines of the Aeneid, the Metamorphoses,
the Thebaid, the Argonautica, the Fasti, ... (Tesserae ``.tess`` files in the shared data folder) up to M. Both
methods see the same texts; the lemmatiser's memo is warmed first (one analysis pass over every text), so
neither pays the first lemmatisation. Prints fit and search seconds of each and the ratio channels / bm25-lemma;
figures, no assertion.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.paths import shared_data_dir  # noqa: E402
from detection.latin.readers import ReadReport, read_tess, tess_prefix  # noqa: E402
from detection.methods import registry  # noqa: E402
from detection.methods.lexical.channels import analyse  # noqa: E402

SOURCE_WORKS = ("vergil.aeneid", "ovid.metamorphoses", "statius.thebaid", "valerius_flaccus.argonautica",
                "ovid.fasti", "lucretius.de_rerum_natura", "vergil.georgics", "ovid.heroides", "ovid.tristia",
                "statius.achilleid", "ovid.ex_ponto", "ovid.amores", "ovid.ars_amatoria", "propertius.elegies")


def lines(stem: str, books=None) -> tuple[list[str], list[str]]:
    path = shared_data_dir() / "latin_texts" / "tesserae" / f"{stem}.tess"
    prefix = tess_prefix(path)
    units = [u for u in read_tess(path, report=ReadReport()) if books is None or int(u.ref.split(".")[0]) in books]
    return [f"{prefix} {u.ref}" for u in units], [u.text for u in units]


def timed(method: str, s_ids, s_texts, q_texts, k: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    r = registry.build(method).fit(s_ids, s_texts)
    t1 = time.perf_counter()
    r.search(q_texts, k)
    return t1 - t0, time.perf_counter() - t1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=850)
    ap.add_argument("--sources", type=int, default=40_000)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--aeneid-metamorphoses", action="store_true")
    args = ap.parse_args()
    if args.aeneid_metamorphoses:
        q_ids, q_texts = lines("vergil.aeneid")
        s_ids, s_texts = lines("ovid.metamorphoses")
        label = f"Aeneid ({len(q_texts)} lines) x Metamorphoses ({len(s_texts)} lines)"
    else:
        q_ids, q_texts = lines("lucan.bellum_civile", books=range(2, 11))
        q_texts = q_texts[:args.queries]
        s_ids, s_texts = [], []
        for stem in SOURCE_WORKS:
            i, t = lines(stem)
            s_ids += i
            s_texts += t
        s_ids, s_texts = s_ids[:args.sources], s_texts[:args.sources]
        label = f"{len(q_texts)} Lucan lines x {len(s_texts)} verse lines"
    t0 = time.perf_counter()
    analyse(q_texts + s_texts)  # warms the lemmatiser's memo for both methods
    print(f"{label}; top {args.k}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
          f"warm-up analysis {time.perf_counter() - t0:.1f} s", flush=True)
    results = {}
    for method in ("bm25-lemma", "channels", "bm25-lemma"):  # ABA: bm25 before and after
        fit, search = timed(method, s_ids, s_texts, q_texts, args.k)
        results.setdefault(method, []).append(fit + search)
        print(f"  {method:12s} fit {fit:7.2f} s  search {search:7.2f} s  total {fit + search:7.2f} s", flush=True)
    bm25 = min(results["bm25-lemma"])
    ch = results["channels"][0]
    print(f"channels / bm25-lemma (best of its two runs): {ch / bm25:.1f}x  ({ch:.1f} s vs {bm25:.1f} s)")


if __name__ == "__main__":
    main()
