"""simulate_annotations: judgements per second, bulk (scheduler in memory) vs through the services.

Usage: .venv/bin/python perf/simulation_bench.py [--annotators 2] [--old-cap 1500]   (DATABASE_URL picks the database)

Two twin projects from the released STS file (3 batches, 14,455 pairs; overlap 3 of 10 per set, as
the demo): the bulk simulation runs to the end on one; the old way (set_next + judgement_submit per
judgement) runs on the other until --old-cap judgements, and its rate is what it would take for all.
Peak memory of the bulk run is measured in a third twin under tracemalloc (not timed).
"""
from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))
from _testdb import throwaway_database  # noqa: E402  (perf/ is on the path only now)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=2)
    parser.add_argument("--old-cap", type=int, default=1500)
    args = parser.parse_args()
    with throwaway_database():
        from django.db import connection

        from annotation.models import Judgement
        from annotation.services.projects import project_create, verses_import
        from annotation.services.simulation import simulate_annotations, simulate_annotations_via_services
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="sim-lead", password="x" * 12, roles=("lead",))
        sts = (ROOT / "data" / "dbbe" / "STS_benchmark_medievalGreek.tsv").read_bytes()

        def twin(name):
            project = project_create(owner=lead, name=name)
            verses_import(project=project, data=sts, filename="STS_benchmark_medievalGreek.tsv")
            return project

        bulk_project, old_project, mem_project = twin("bulk"), twin("old"), twin("mem")
        t0 = time.perf_counter()
        summary = simulate_annotations(project=bulk_project, annotators=args.annotators, seed=1)
        bulk_s = time.perf_counter() - t0
        n_bulk = summary["judgements"]
        assert Judgement.objects.filter(batch__project=bulk_project).count() == n_bulk
        t0 = time.perf_counter()
        n_old = simulate_annotations_via_services(project=old_project, annotators=args.annotators, seed=1,
                                                  max_judgements=args.old_cap)["judgements"]
        old_s = time.perf_counter() - t0
        tracemalloc.start()
        simulate_annotations(project=mem_project, annotators=args.annotators, seed=1)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        bulk_rate, old_rate = n_bulk / bulk_s, n_old / old_s
        print(f"database: {connection.vendor}; {args.annotators} simulated annotators, 1 judgement per pair, "
              f"3 batches of the STS file")
        print(f"bulk (scheduler in memory, rows written in bulk): {n_bulk:,} judgements in {bulk_s:.2f} s = "
              f"{bulk_rate:,.0f} judgements/s; peak traced memory {peak:.0f} MiB")
        print(f"old (set_next + judgement_submit per judgement): {n_old:,} judgements in {old_s:.2f} s = "
              f"{old_rate:,.0f} judgements/s (all {n_bulk:,} would take ~{n_bulk / old_rate:.0f} s)")
        print(f"ratio: {bulk_rate / old_rate:.0f}x")


if __name__ == "__main__":
    main()
