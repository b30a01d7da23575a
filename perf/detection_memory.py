"""Peak memory (RSS) of full-corpus detection: every query against every source, one fresh process per run.

    .venv/bin/python perf/detection_memory.py [--corpus DIR] [--runs tesserae:100,tesserae:1000,bm25-lemma:1000]

Each run is a new Python process that reads the corpus CSVs, analyses both sides (lemma cache), fits the
retriever and searches all queries at top-k; its peak RSS is the kernel's ru_maxrss for that process
(``os.wait4``), so nothing of this script is counted. Also printed: the dense query x source matrix the run
avoids (float32), to show that no step holds one.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import csv, sys, time
sys.path.insert(0, sys.argv[1])
from detection.latin.lemmatize import default_cache_dir
from detection.methods import get_retriever
def load(p):
    with open(p, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["seg_id"] for r in rows], [r["text"] for r in rows]
sid, st = load(sys.argv[2] + "/source.csv")
_, qt = load(sys.argv[2] + "/query.csv")
t = time.perf_counter()
res = get_retriever(sys.argv[3], cache_dir=str(default_cache_dir())).fit(sid, st).search(qt, int(sys.argv[4]))
print(f"{len(qt)} {len(sid)} {time.perf_counter() - t:.1f} {int((res.indices >= 0).sum())}")
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--runs", default="tesserae:100,tesserae:1000,bm25-lemma:1000")
    args = ap.parse_args()
    print(f"cores {os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}", flush=True)
    for run in args.runs.split(","):
        method, k = run.split(":")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT), str(Path(args.corpus).resolve()), method, k],
                                stdout=subprocess.PIPE, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if status:
            raise SystemExit(f"{run} failed ({status})")
        nq, ns, secs, hits = out.split()
        dense = int(nq) * int(ns) * 4 / 2**30
        print(f"{method} top-{k}: {nq} x {ns}, fit + search {float(secs):.1f} s ({time.perf_counter() - t0:.1f} s "
              f"with reading and analysis), {int(hits):,} results, peak RSS {usage.ru_maxrss / 1024:.0f} MiB "
              f"(a dense float32 query x source matrix would be {dense:.1f} GiB); load avg {os.getloadavg()[0]:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
