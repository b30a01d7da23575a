"""Clean leave-one-benchmark-out (issue 25): nothing in the pipeline saw the held-out benchmark.

    .venv/bin/python perf/clean_lobo.py [--corpus-dir DIR] [--report saved.json] [--save report.json]

Runs the suite (``benchmarks.suite.suite.run_suite``, Loci Similes and Lucan -> Virgil, 10,000 resamples) over the
protocol's rows, written down in docs/benchmark_suite.md ("Clean leave-one-benchmark-out") before the first run:

- ``bm25-lemma``; ``channels`` with its profile fixed (``channels(profile=prose)``, ``channels(profile=verse)``)
  and as shipped (each benchmark's text type); ``UNTUNED``, a fusion with no tuned choice (every weight 1, the
  prose text type's switches, the fused score's top k as candidates, ``rare_min`` 9);
- ``FIRST>feature-ltr(anchor=true,C=...)@lobo`` over each of them, trained on the other benchmark's candidates
  from the same first stage; over ``UNTUNED`` the four ``C`` of the anchored grid, held out and within (5 folds),
  ``C`` picked on the training benchmark's within rows only (the round-4 rule: the best CV gain in MRR@10 over
  the first stage, ties by R@10).

Prints, per held-out benchmark, every row's R@10 and MRR@10 and each ranker's paired comparison (delta, p of the
randomisation test / t-test) against every unsupervised row of the run. ``--report`` reads a report saved
before (``--save``, or the suite command's ``--output``) instead of running.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.suite import suite as S  # noqa: E402
from benchmarks.suite.suite_commands import _benchmarks  # noqa: E402

UNTUNED = ("channels(profile=prose,candidates=fused,rare_min=9," +
           ",".join(f"{c}_weight=1" for c in ("lemma", "rare", "form", "quote", "sound", "edit", "synonym", "order",
                                              "semantic")) + ")")
C_GRID = ("0.0001", "0.001", "0.01", "0.1")
TRAINED_ON = {"lucan-vergil": "loci-similes", "loci-similes": "lucan-vergil"}


def ltr(first: str, c: str, lobo: bool = True) -> str:
    return f"{first}>feature-ltr(anchor=true,C={c})" + ("@lobo" if lobo else "")


def methods() -> list[str]:
    out = ["bm25-lemma", "channels(profile=prose)", "channels(profile=verse)", "channels", UNTUNED]
    out += [ltr(f, "0.001") for f in ("channels(profile=prose)", "channels(profile=verse)", "channels")]
    for c in C_GRID:
        out += [ltr(UNTUNED, c), ltr(UNTUNED, c, lobo=False)]
    return out


def short(spec: str) -> str:
    return spec.replace(UNTUNED, "U")


def pick(rows: dict) -> str:
    """The ``C`` of the anchored grid over ``UNTUNED`` with the best within-benchmark MRR@10 gain over ``UNTUNED``
    itself on this (training) benchmark, ties by R@10."""
    base = rows[UNTUNED]["mean"]

    def gain(c):
        m = rows[ltr(UNTUNED, c, lobo=False)]["mean"]
        return (m["RR@10"] - base["RR@10"], m["R@10"] - base["R@10"])
    return max(C_GRID, key=gain)


def table(report: dict) -> str:
    out = []
    picks = {b: pick(report["rows"][b]) for b in report["rows"]}
    for held, rows in report["rows"].items():
        train = TRAINED_ON[held]
        c = picks.get(train)
        out.append(f"\n{held} held out (rankers trained on {train}; C over U picked on {train}'s within rows: "
                   f"{c}, CV gains (MRR@10, R@10): " +
                   ", ".join(f"{x}: {rows_gain(report['rows'][train], x)}" for x in C_GRID) + ")")
        out.append("| method | R@10 | MRR@10 | vs | Δ R@10 (p rand. / t) | Δ MRR@10 (p rand. / t) |")
        out.append("|---|---|---|---|---|---|")
        for spec, r in rows.items():
            if spec.endswith(")") and spec.startswith(UNTUNED + ">"):
                continue  # within rows: the pick's evidence, printed above
            m = r["mean"]
            head = f"| {short(spec)} | {m['R@10']:.4f} | {m['RR@10']:.4f} |"
            vs = {**({"bm25-lemma": r["vs_first"]} if "vs_first" in r else {}), **r.get("vs", {})}
            if ">" not in spec or not vs:
                out.append(head + " – | – | – |")
                continue
            for i, (b, cmp_) in enumerate(vs.items()):
                cells = " | ".join(f"{cmp_[k]['delta']:+.4f} ({cmp_[k]['p_randomization']:.2g} / "
                                   f"{cmp_[k]['p_ttest']:.2g})" for k in ("R@10", "RR@10"))
                out.append((head if i == 0 else "| | | |") + f" {short(b)} | {cells} |")
    return "\n".join(out)


def rows_gain(rows: dict, c: str) -> str:
    base, m = rows[UNTUNED]["mean"], rows[ltr(UNTUNED, c, lobo=False)]["mean"]
    return f"{m['RR@10'] - base['RR@10']:+.4f} / {m['R@10'] - base['R@10']:+.4f}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus-dir", default=None)
    p.add_argument("--report", default=None, help="a saved report to print instead of running")
    p.add_argument("--save", default=None)
    p.add_argument("--resamples", type=int, default=10_000)
    a = p.parse_args(argv)
    if a.report:
        report = json.loads(Path(a.report).read_text(encoding="utf-8"))
    else:
        t0 = time.perf_counter()
        report = S.run_suite(methods(), _benchmarks(("loci-similes", "lucan-vergil"), a.corpus_dir),
                             n_resamples=a.resamples, progress=lambda m: print(m, file=sys.stderr, flush=True))
        print(f"run: {time.perf_counter() - t0:.0f} s")
        if a.save:
            Path(a.save).write_text(json.dumps(report), encoding="utf-8")
    print(f"U = {UNTUNED}")
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
