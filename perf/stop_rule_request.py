"""What the next-set request and the dashboard's stop-rule card pay for the stop rule once a 99-candidate adaptive batch
is near its threshold: the exact draws made inline (before) against reading the latest `annotation.stop_check` job's
result and queueing one (now).

Usage: .venv/bin/python perf/stop_rule_request.py [--reps 5] [--budget 1500]

For each rep, a 99-candidate batch judged adaptively (`pair_selection.simulate_design`, 11 annotators of equal noise,
θ ~ N(0, 2²)) gives a count matrix; the project's top-10 rule (9 of 10, margin 0.5) gets a level 0.05 above its Laplace probability,
so the Laplace gate passes (the state in which the request used to make the draws). Timed, in a throwaway test
database, each the call `adaptive_fresh` makes (`adaptive_batches.stop_status` with the selection's Laplace fit):

* ``inline draws``: without `exact_source`, as the next-set path did: 600 exact draws (`exact_settled`, cache cleared);
* ``job result``: with `exact_source` = `read_stop_check`, as it does now: the look-up of the batch's latest check
  and, when none is queued, the Job row it queues (inside a transaction rolled back afterwards, so the job is not run
  here; the message to the broker, sent on commit, is not timed).

and the dashboard card's call (`stop_status` without the selection's fit: the card fits the Laplace posterior itself):

* ``card inline draws``: `stop_status(project, counts)`, as the card did (cache cleared);
* ``card stored check``: with the source `stored_stop_status` gives it (`read_stop_check`: the latest stored check
  and the one in progress, a check queued when stale), as it does now. The count matrix's read from the database is the
  same in both and not timed.

Prints medians of wall and CPU time and the same-run ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _testdb import throwaway_database  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget", type=int, default=1500)
    args = ap.parse_args()
    with throwaway_database():
        import json
        import uuid

        from django.db import transaction

        from annotation.services import adaptive_batches as ab
        from annotation.services.projects import batch_create, project_create, verses_import
        from annotation.stats import pair_selection as ps
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="perf-lead", password=uuid.uuid4().hex, roles=("lead",))
        project = project_create(owner=lead, name="perf-stop", set_size=10, overlap_per_set=3, overlap_mode="adaptive")
        verses_import(project=project, data=json.dumps([{"verse_id": f"9 {k}", "text": f"v{k}"} for k in range(100)])
                      .encode(), filename="v.json", create_batches=False)
        batch = batch_create(project=project, reference_id="9 0", candidate_ids=[f"9 {k}" for k in range(1, 100)],
                             seed=1, name="b")
        times: dict[str, list] = {"inline draws": [], "job result": [], "card inline draws": [],
                                  "card stored check": []}
        for rep in range(args.reps):
            theta = np.random.default_rng(rep).normal(0, 2, 99)
            counts = ps.simulate_design(theta, "adaptive", annotator_scales=np.ones(11), budget=args.budget, seed=rep,
                                        return_counts=True)["counts"]
            post = ps.posterior(counts)
            project.stop_top_k, project.stop_recall, project.stop_margin, project.stop_level = 10, 0.9, 0.5, 0.5
            compared = np.ones(len(theta), bool)
            project.stop_level = min(0.999, max(0.5, ab.laplace_settled(post, compared, ab.stop_rule(project))["p"]
                                                + 0.05))
            with ab._EXACT_LOCK:
                ab._EXACT.clear()
            t, c = time.perf_counter(), time.process_time()
            inline = ab.stop_status(project, counts, post, previous={})
            times["inline draws"].append((time.perf_counter() - t, time.process_time() - c))
            with transaction.atomic():
                t, c = time.perf_counter(), time.process_time()
                queued = ab.stop_status(project, counts, post, previous={}, exact_source=lambda judged: (
                    ab.read_stop_check(batch, judged, ab.stop_rule(project)).done))
                times["job result"].append((time.perf_counter() - t, time.process_time() - c))
                transaction.set_rollback(True)
            assert inline["posterior"] == "exact" and queued["exact_pending"], (inline, queued)
            with ab._EXACT_LOCK:
                ab._EXACT.clear()
            t, c = time.perf_counter(), time.process_time()
            card = ab.stop_status(project, counts)
            times["card inline draws"].append((time.perf_counter() - t, time.process_time() - c))
            with transaction.atomic():
                t, c = time.perf_counter(), time.process_time()
                stored = ab.stop_status(project, counts, exact_source=lambda judged: (
                    ab.read_stop_check(batch, judged, ab.stop_rule(project)).done))
                times["card stored check"].append((time.perf_counter() - t, time.process_time() - c))
                transaction.set_rollback(True)
            assert card["posterior"] == "exact" and stored["exact_pending"], (card, stored)
            print(f"rep {rep}: inline {times['inline draws'][-1][0]:.3f} s, job result "
                  f"{times['job result'][-1][0] * 1e3:.2f} ms; card inline {times['card inline draws'][-1][0]:.3f} s, "
                  f"card stored check {times['card stored check'][-1][0] * 1e3:.2f} ms", flush=True)
        med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in times.items()}
        for k, (wall, cpu) in med.items():
            print(f"{k}: wall median {wall * 1e3:.1f} ms, CPU median {cpu * 1e3:.1f} ms")
        for before, now in (("inline draws", "job result"), ("card inline draws", "card stored check")):
            print(f"{before} / {now}, same run: wall {med[before][0] / med[now][0]:.0f}x, "
                  f"CPU {med[before][1] / med[now][1]:.0f}x")


if __name__ == "__main__":
    main()
