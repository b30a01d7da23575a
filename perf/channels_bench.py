"""Speed of the multi-channel retriever (``channels``, every channel on) against ``bm25-lemma`` alone, same run.

    .venv/bin/python perf/channels_bench.py [--queries 850] [--sources 40000] [--k 1000] [--repeat 1]
    .venv/bin/python perf/channels_bench.py --aeneid-metamorphoses      # the whole Aeneid x Metamorphoses

Queries: the first N lines of Lucan's Bellum Civile 2-10; sources: verse lines of the Aeneid, the Metamorphoses,
the Thebaid, the Argonautica, the Fasti, ... (Tesserae ``.tess`` files in the shared data folder) up to M. Both
methods see the same texts; the lemmatiser's memo is warmed first (one analysis pass over every text), so
neither pays the first lemmatisation. Order ABA (bm25-lemma, channels, bm25-lemma).

For each run it prints wall seconds and where they went (:class:`Clock`): CPU seconds of this process and of
its child processes (``RUSAGE_CHILDREN``: none of the methods starts one, the figure shows it), and the seconds
its threads were ready to run but waited for a core (the kernel's run-queue delay, ``/proc/self/task/*/schedstat``).
On a shared machine wall ~ CPU + waiting; what remains is I/O or sleep. Then the ratio channels / bm25-lemma
(mean of its two runs), in CPU seconds and in wall seconds. Figures, no assertion.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.paths import shared_data_dir  # noqa: E402
from detection.channels.channel_features import analyse  # noqa: E402
from detection.latin.readers import ReadReport, read_tess, tess_prefix  # noqa: E402
from detection.methods import registry  # noqa: E402

SOURCE_WORKS = ("vergil.aeneid", "ovid.metamorphoses", "statius.thebaid", "valerius_flaccus.argonautica",
                "ovid.fasti", "lucretius.de_rerum_natura", "vergil.georgics", "ovid.heroides", "ovid.tristia",
                "statius.achilleid", "ovid.ex_ponto", "ovid.amores", "ovid.ars_amatoria", "propertius.elegies")


def lines(stem: str, books=None) -> tuple[list[str], list[str]]:
    path = shared_data_dir() / "latin_texts" / "tesserae" / f"{stem}.tess"
    prefix = tess_prefix(path)
    units = [u for u in read_tess(path, report=ReadReport()) if books is None or int(u.ref.split(".")[0]) in books]
    return [f"{prefix} {u.ref}" for u in units], [u.text for u in units]


def _run_queue_wait() -> float:
    """Seconds this process's threads have waited, runnable, for a core (Linux schedstat; 0 elsewhere)."""
    total = 0
    for stat in Path("/proc/self/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


class Clock:
    """Wall seconds, CPU seconds of this process and of its children, and run-queue wait, from start to now."""

    def __init__(self):
        self.start = self._now()

    @staticmethod
    def _now() -> tuple[float, float, float, float]:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return (time.perf_counter(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, _run_queue_wait())

    def read(self) -> dict:
        now = self._now()
        wall, cpu, child, wait = (b - a for a, b in zip(self.start, now))
        return {"wall": wall, "cpu": cpu + child, "children": child, "wait": wait}


def describe(c: dict) -> str:
    rest = c["wall"] - c["cpu"] - c["wait"]
    return (f"{c['wall']:6.2f} s wall = {c['cpu']:6.2f} CPU-s (children {c['children']:.2f}) + {c['wait']:6.2f} s "
            f"waiting for a core + {rest:5.2f} s other")


def timed(method: str, s_ids, s_texts, q_texts, k: int, progress=None) -> tuple[dict, dict]:
    """(fit, search) clocks of ``method`` built, fitted on the sources and searched with the queries."""
    clock = Clock()
    r = registry.build(method).fit(s_ids, s_texts)
    fit = clock.read()
    clock = Clock()
    r.search(q_texts, k, progress=progress)
    return fit, clock.read()


def compare(s_ids, s_texts, q_texts, k: int, progress=None) -> None:
    """bm25-lemma, channels, bm25-lemma (ABA): each run's clocks, then channels / bm25-lemma."""
    total: dict[str, list[dict]] = {}
    for method in ("bm25-lemma", "channels", "bm25-lemma"):
        fit, search = timed(method, s_ids, s_texts, q_texts, k, progress)
        both = {key: fit[key] + search[key] for key in fit}
        total.setdefault(method, []).append(both)
        print(f"  {method:10s} fit {fit['cpu']:6.2f} CPU-s  search {search['cpu']:6.2f} CPU-s  |  {describe(both)}",
              flush=True)
    ch = total["channels"][0]
    bm = {key: sum(r[key] for r in total["bm25-lemma"]) / 2 for key in ch}
    print(f"channels / bm25-lemma (mean of its two runs): {ch['cpu'] / bm['cpu']:.1f}x CPU "
          f"({ch['cpu']:.1f} vs {bm['cpu']:.1f} CPU-s), {ch['wall'] / bm['wall']:.1f}x wall "
          f"({ch['wall']:.1f} vs {bm['wall']:.1f} s); load average {os.getloadavg()[0]:.1f}", flush=True)


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
    print(f"{label}; top {args.k}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}; warm-up analysis {time.perf_counter() - t0:.1f} s",
          flush=True)
    compare(s_ids, s_texts, q_texts, args.k)


if __name__ == "__main__":
    main()
