"""The default detector on the Lucan -> Virgil books it was never tuned on (6-10), through the product's own
``manage.py detect``: per-query R@10/R@100/R@1000 and the whole run's precision at 50 pairs, forward rule.

    .venv/bin/python perf/verse_heldout.py [--books 6-10] [--method channels] [--param KEY=VALUE ...]
        [--write-expected perf/expected/detection/verse_heldout.yaml]

Queries: every line of the Lucan books asked for (``.tess`` order; the duplicate, mis-numbered line ids are dropped
by ``detect --skip-bad-rows``, which keeps each id's first line, and counted); sources: the Aeneid. The run is
``detect --top-k 1000 --explain none`` (the default method unless ``--method``). Gold: the commentary parallels of
those books (``benchmarks.verse.lucan_vergil``). Rule (the benchmark's, ``shared/data/README.md``): a pair (L, A)
is found at k when the top k of L, L+1 or L+2 holds A, A+1 or A+2 (lines before the cited ones never count).
Whole-run precision at N: the run's N best pairs by score (ties: query order, then rank), each correct when it is
such a window of a gold pair. Weights were chosen on books 2-5 and Loci Similes only; this script tunes nothing.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.verse.lucan_vergil import _following, evaluate_verse, load_lucan_vergil  # noqa: E402
from core.paths import shared_data_dir  # noqa: E402
from detection.latin.readers import read_tess, tess_prefix  # noqa: E402


def _books(spec: str) -> set[int]:
    lo, _, hi = spec.partition("-")
    return set(range(int(lo), int(hi or lo) + 1))


def whole_run_precision(bench, rows: list[tuple[str, str, float]], n: int, tolerance: int = 2) -> float:
    """Share of the ``n`` best pairs of the run (by score) that fall in a gold pair's forward window."""
    qspan, sspan = _following(bench.query_ids, tolerance), _following(bench.source_ids, tolerance)
    good = {(line, s) for q, golds in bench.gold.items() for a in golds for line in qspan[q] for s in sspan[a]}
    order = sorted(range(len(rows)), key=lambda i: -rows[i][2])[:n]  # stable: file order (query, rank) at ties
    return sum((rows[i][0], rows[i][1]) in good for i in order) / max(len(order), 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--books", default="6-10")
    ap.add_argument("--method", default=None)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--write-expected", default=None)
    args = ap.parse_args()
    books = _books(args.books)
    bench = load_lucan_vergil()
    in_books = [q for q in bench.query_ids if int(q.rsplit(" ", 1)[-1].split(".")[0]) in books]
    bench.query_ids = in_books
    bench.gold = {q: a for q, a in bench.gold.items() if q in set(in_books)}
    data = shared_data_dir() / "latin_texts" / "tesserae"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, stem, keep in (("q", "lucan.bellum_civile", books), ("s", "vergil.aeneid", None)):
            path = data / f"{stem}.tess"
            prefix = tess_prefix(path)
            with open(tmp / f"{name}.csv", "w", encoding="utf-8", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(["seg_id", "text"])
                for u in read_tess(path):
                    if keep is None or int(u.ref.split(".")[0]) in keep:
                        w.writerow([f"{prefix} {u.ref}", u.text])
        cmd = [sys.executable, "manage.py", "detect", "--query", str(tmp / "q.csv"), "--source", str(tmp / "s.csv"),
               "--top-k", "1000", "--explain", "none", "--skip-bad-rows", "--output", str(tmp / "out.csv")]
        cmd += (["--method", args.method] if args.method else []) + [x for p in args.param for x in ("--param", p)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(proc.stderr[-3000:])
        wall = time.perf_counter() - t0
        ranked: dict[str, list[str]] = {}
        scores: dict[str, list[float]] = {}
        rows = []
        with open(tmp / "out.csv", encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                ranked.setdefault(r["query_id"], []).append(r["source_id"])
                scores.setdefault(r["query_id"], []).append(float(r["score"]))
                rows.append((r["query_id"], r["source_id"], float(r["score"])))
    report = evaluate_verse(bench, ranked, scores=scores, ks=(10, 100, 1000))
    rec = {k: round(v, 4) for k, v in report["per_query"].items() if k.startswith("R@")}
    p50 = whole_run_precision(bench, rows, 50)
    notes = [line for line in proc.stderr.splitlines() if "skipped" in line or line.startswith("wrote ")]
    label = f"lucan books {args.books} -> aeneid: {args.method or 'default'} {' '.join(args.param)}".strip()
    print(f"{label}: {rec}, whole-run P@50 {p50:.2f}; {report['n_queries']} gold queries, {report['n_pairs']} pairs; "
          f"{wall:.0f} s wall\n  " + "\n  ".join(notes))
    if args.write_expected:
        import yaml

        path = Path(args.write_expected)
        stored = yaml.safe_load(path.read_text()) if path.is_file() else {}
        stored[label] = {**rec, "P@50 whole run": round(p50, 3), "gold queries": report["n_queries"],
                         "gold pairs": report["n_pairs"],
                         "command": " ".join(["perf/verse_heldout.py", *sys.argv[1:]]).replace(
                             f" --write-expected {args.write_expected}", ""),
                         "detect": "manage.py detect --query LUCAN_BOOKS.csv --source AENEID.csv " + " ".join(
                             x for x in cmd[7:] if not x.startswith(str(tmp)))}
        path.write_text(yaml.safe_dump(stored, sort_keys=True, allow_unicode=True, width=120))


if __name__ == "__main__":
    main()
