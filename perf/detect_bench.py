"""End-to-end cost of ``manage.py detect`` (a fresh process: start-up, reading, fitting, searching, explaining and
writing the file), in CPU seconds of the child process and bytes written.

    .venv/bin/python perf/detect_bench.py verse [--queries 850] [--sources 40000] [--k 1000] [--explain top-100]
    .venv/bin/python perf/detect_bench.py loci --corpus DIR [--method bm25-lemma] [--k 1000] [--explain none]
    .venv/bin/python perf/detect_bench.py ... --write-expected perf/expected/detection/detect.yaml

``verse``: the first N lines of Lucan's Bellum Civile 2-10 against M verse lines of the Aeneid, the
Metamorphoses, the Thebaid ... (``perf/channels_bench.py``'s works), with the default retriever (``channels``,
profile verse). ``loci``: the Loci Similes corpus built by ``manage.py build_corpus`` (``query.csv``/``source.csv``
in ``--corpus``). The lemma cache is warmed by one run first (not counted: the figure is a rerun's). Each run
prints its CPU-s (user + system of the child), wall seconds, rows and output MB; ``--write-expected`` stores them
(figures, no assertion).
"""
from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from channels_bench import SOURCE_WORKS, lines  # noqa: E402


def _write(path: Path, ids, texts) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["seg_id", "text"])
        w.writerows(zip(ids, texts))


def verse_files(folder: Path, n_queries: int, n_sources: int) -> tuple[Path, Path]:
    q_ids, q_texts = lines("lucan.bellum_civile", books=range(2, 11))
    s_ids, s_texts = [], []
    for stem in SOURCE_WORKS:
        i, t = lines(stem)
        s_ids, s_texts = s_ids + i, s_texts + t
    _write(folder / "q.csv", q_ids[:n_queries], q_texts[:n_queries])
    _write(folder / "s.csv", s_ids[:n_sources], s_texts[:n_sources])
    return folder / "q.csv", folder / "s.csv"


def run(args: list[str], out: Path) -> dict:
    """One ``manage.py detect`` process: its CPU-s (user + system), wall seconds, rows and output size."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "manage.py", "detect", *args, "--output", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    last = [line for line in proc.stderr.splitlines() if line.startswith("wrote ")]
    with open(out, "rb") as fh:
        rows = sum(1 for _ in fh) - 1
    return {"cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "wall_s": round(wall, 1), "rows": rows, "output_mb": round(out.stat().st_size / 1e6, 1),
            "summary": last[-1] if last else ""}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=("verse", "loci"))
    ap.add_argument("--queries", type=int, default=850)
    ap.add_argument("--sources", type=int, default=40_000)
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--method", default=None)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--explain", default=None)
    ap.add_argument("--write-expected", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.case == "verse":
            q, s = verse_files(tmp, args.queries, args.sources)
            method, explain = args.method or "channels", args.explain or "top-100"
        else:
            q, s = Path(args.corpus) / "query.csv", Path(args.corpus) / "source.csv"
            method, explain = args.method or "bm25-lemma", args.explain or "none"
        common = ["--query", str(q), "--source", str(s), "--method", method, "--top-k", str(args.k),
                  "--explain", explain, "--skip-bad-rows", "--cache-dir", str(Path(tempfile.gettempdir()) / "similia-bench-lemmas")]
        run(common, tmp / "warm.csv")  # warms the lemma cache (kept between runs, like a user's)
        figure = run(common, tmp / "out.csv")
    figure["load_average"] = round(os.getloadavg()[0], 1)  # CPU-s grow on a crowded machine (shared caches)
    label = f"{args.case}: {method} top-{args.k}, --explain {explain}"
    print(f"{label}: {figure['cpu_s']} CPU-s, {figure['wall_s']} s wall, {figure['rows']:,} rows, "
          f"{figure['output_mb']} MB; load average {os.getloadavg()[0]:.1f}\n  {figure['summary']}")
    if args.write_expected:
        import yaml

        path = Path(args.write_expected)
        stored = yaml.safe_load(path.read_text()) if path.is_file() else {}
        stored[label] = {k: v for k, v in figure.items()}
        path.write_text(yaml.safe_dump(stored, sort_keys=True, allow_unicode=True))


if __name__ == "__main__":
    main()
