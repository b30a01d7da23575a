"""Lucan -> Virgil (the dev verse benchmark) run as a corpus search: every Lucan line a gold parallel's window
touches searched against the whole corpus index (the gold only in the Aeneid), beside the same searches with the
index filtered to the Aeneid alone (the same scores, the other works left out).

    .venv/bin/python perf/corpus_lucan_vergil.py [--index var/corpora/tesserae-la] [--write perf/expected/corpus/corpus_lucan_vergil.yaml]

Per-query R@1, R@10, R@100 and MRR@10 of :func:`benchmarks.verse.lucan_vergil.evaluate_verse` (tolerance 2: a
pair is found when a line L..L+2 ranks a line A..A+2), over the gold's query lines; the Lucan lines are those of
the corpus (``luc. 2.5``), the corpus's own Lucan left out as any passage's own work is. Figures, no assertion.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.verse.lucan_vergil import _following, evaluate_verse, load_lucan_vergil  # noqa: E402
from detection.channels import corpus_index, corpus_search  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=str(ROOT / "var" / "corpora" / "tesserae-la"))
    ap.add_argument("--write", default="")
    a = ap.parse_args()
    bench = load_lucan_vergil()
    qspan = _following(bench.query_ids, 2)
    needed = sorted({line for q in bench.gold for line in qspan[q]}, key=bench.query_ids.index)
    text = dict(zip(bench.query_ids, bench.query_texts))
    settings = corpus_index.channel_settings()
    searcher = corpus_search.CorpusSearcher(corpus_index.CorpusIndex(a.index, expected_digest=settings.digest),
                                            settings)
    runs = {"whole corpus": corpus_search.Filters(exclude_works=["lucan.bellum_civile"]),
            "aeneid alone": corpus_search.Filters(works=["vergil.aeneid"])}
    figures = {}
    for label, flt in runs.items():
        ranked, t0 = {}, time.process_time()
        for line in needed:
            try:
                q = corpus_search.check_query(text[line])
            except corpus_search.QueryError:
                ranked[line] = []
                continue
            hits, _ = searcher.search(q, 100, filters=flt, explain=0, checked=True)
            ranked[line] = [h.citation for h in hits]
        report = evaluate_verse(bench, ranked, ks=(1, 10, 100))
        per = report.get("per_query", report)
        figures[label] = {k: round(float(v), 4) for k, v in per.items() if isinstance(v, (int, float))}
        figures[label]["cpu_seconds"] = round(time.process_time() - t0, 1)
        print(label, figures[label])
    stored = {"name": "corpus_lucan_vergil", "command": " ".join(["perf/corpus_lucan_vergil.py", *sys.argv[1:]]),
              "setup": {"queries": len(needed), "gold_pairs": bench.n_pairs, "k": 100, "tolerance": 2},
              "figures": figures}
    if a.write:
        import yaml

        Path(a.write).write_text(yaml.safe_dump(stored, sort_keys=False), encoding="utf-8")
        print(f"written {a.write}")


if __name__ == "__main__":
    main()
