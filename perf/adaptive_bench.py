"""Adaptive annotation (issue 26): how many judgements the adaptive design needs, and how fast it serves a set.

Usage: .venv/bin/python perf/adaptive_bench.py [--seeds 20] [--reference "16977 1"] [--latency-only | --design-only]
       [--coverage-seeds 20]

Design part (pure numpy, `annotation.stats.pair_selection.simulate_design`): one 99-candidate batch of the DBBE STS
gold (`data/dbbe/STS_benchmark_medievalGreek.tsv`, latent strength θ = 6 · gold as in the demo's simulation), 11
simulated annotators choosing i over j with probability σ((θ_i − θ_j) / s_k), s_k = 0.5 … 1.5 (the demo's noise 1),
sets of 10 with 3 overlap pairs judged again by another annotator. For each seed the same annotators judge under
the exhaustive design (every pair once plus the overlap judgements), random pairs and adaptive pairs (explore share
0.2). Prints Spearman(BT posterior mode, θ) against judgements per design (mean and SD over seeds), the judgements
adaptive and random need to reach the exhaustive design's correlation, adaptive − random at each budget (the named
alternative: random pairs at equal budget), and the 95 % interval coverage of the BT posterior
(`bradley_terry_posterior`) at the end of adaptive runs.

Latency part (Django, a throw-away SQLite test database): a 100-candidate adaptive batch (4,950 pairs), 20
annotators; every annotator takes sets in turn and answers them; prints the median and p95 in-process time of
`set_next` for the adaptive mode against the inter-annotator mode on an identical batch (same run).
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

STS = ROOT / "data" / "dbbe" / "STS_benchmark_medievalGreek.tsv"
GOLD_SCALE = 6.0


def gold_theta(reference: str | None) -> tuple[str, np.ndarray]:
    by_ref: dict[str, list[float]] = {}
    with STS.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            by_ref.setdefault(row["verse1_id"], []).append(float(row["normalized_counts"]))
    ref = reference or next(r for r, v in by_ref.items() if len(v) == 99)
    return ref, GOLD_SCALE * np.array(by_ref[ref])


def first_reaching(js, rhos, target):
    for j, r in zip(js, rhos):
        if r >= target:
            return j
    return None


def design_part(args) -> None:

    from annotation.stats import bradley_terry_posterior
    from annotation.stats.pair_selection import simulate_design

    ref, theta = gold_theta(args.reference)
    n = len(theta)
    n_pairs = n * (n - 1) // 2
    scales = np.array([0.5 + k / 10 for k in range(11)])
    full = n_pairs * 2  # beyond what the exhaustive design can use: it stops when every pair is judged
    checkpoints = sorted({*range(250, 3001, 250), 3500, 4000, 5000, 6000, full})
    print(f"reference {ref}: {n} candidates, {n_pairs} pairs, θ = 6·gold (SD {theta.std():.2f}); 11 annotators, "
          f"sets of 10 with 3 overlap; {args.seeds} seeds")
    curves = {d: [] for d in ("exhaustive", "random", "adaptive")}
    coverage_hits = coverage_total = 0
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        ex = simulate_design(theta, "random", annotator_scales=scales, budget=full, seed=seed, checkpoints=[full])
        curves["exhaustive"].append((ex["judgements"][-1], ex["spearman"][-1]))
        rnd = simulate_design(theta, "random", annotator_scales=scales, budget=6000, seed=seed,
                              checkpoints=[c for c in checkpoints if c <= 6000])
        ad = simulate_design(theta, "adaptive", annotator_scales=scales, budget=6000, seed=seed,
                             checkpoints=[c for c in checkpoints if c <= 6000], return_counts=True)
        curves["random"].append(rnd)
        curves["adaptive"].append(ad)
        if seed < args.coverage_seeds:
            # coverage of the adaptive design's intervals at 1,500 judgements (a third of the pairs)
            # Annotators of equal noise (s = 1) here, so that Bradley–Terry is the true model and the check measures
            # what adaptive selection does to the intervals (with mixed noise the pooled BT strengths are not θ / s
            # for any one s, and "coverage" would measure the misfit instead).
            part = simulate_design(theta, "adaptive", annotator_scales=np.ones(11), budget=1500, seed=1000 + seed,
                                   return_counts=True)
            post = bradley_terry_posterior(part["counts"], n_draws=0)
            truth = theta - theta.mean()
            ok = (post.lower <= truth) & (truth <= post.upper)
            coverage_hits += int(ok.sum())
            coverage_total += n
        print(f"  seed {seed}: exhaustive ρ {ex['spearman'][-1]:.3f} at {ex['judgements'][-1]} judgements "
              f"({time.perf_counter() - t0:.0f} s so far)", flush=True)
    ex_j = np.array([j for j, _ in curves["exhaustive"]])
    ex_r = np.array([r for _, r in curves["exhaustive"]])
    target = float(ex_r.mean())
    print(f"\nexhaustive: ρ {ex_r.mean():.3f} ± {ex_r.std():.3f} with {ex_j.mean():.0f} judgements")
    print(f"{'judgements':>10} | {'random ρ':>15} | {'adaptive ρ':>15} | adaptive − random (min over seeds)")
    js = curves["random"][0]["judgements"]
    for k, j in enumerate(js):
        r = np.array([c["spearman"][k] for c in curves["random"]])
        a = np.array([c["spearman"][k] for c in curves["adaptive"]])
        print(f"{j:>10} | {r.mean():.3f} ± {r.std():.3f} | {a.mean():.3f} ± {a.std():.3f} | "
              f"{(a - r).mean():+.3f} ({(a - r).min():+.3f})")
    for design in ("random", "adaptive"):
        mean_curve = np.mean([c["spearman"] for c in curves[design]], axis=0)
        reach = first_reaching(js, mean_curve, target)
        share = f"{reach / ex_j.mean():.0%} of the exhaustive design's" if reach else "not reached within 6,000"
        print(f"{design}: mean curve reaches the exhaustive ρ {target:.3f} at {reach} judgements ({share})")
    if coverage_total:
        print(f"BT posterior 95 % interval coverage after 1,500 adaptive judgements ({args.coverage_seeds} seeds, "
              f"annotators of equal noise s = 1): {coverage_hits / coverage_total:.3f}")


def latency_part(args) -> None:
    from _testdb import throwaway_database

    with throwaway_database():
        import json
        import uuid

        from annotation.models import Project
        from annotation.services.judgements import judgement_submit
        from annotation.services.projects import batch_create, membership_add, project_create, verses_import
        from annotation.services.scheduling import set_next
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="perf-lead", password=uuid.uuid4().hex, roles=("lead",))
        people = [user_create_or_update(username=f"perf-a{k}", password=uuid.uuid4().hex, roles=("annotator",))[0]
                  for k in range(20)]
        verses = json.dumps([{"verse_id": f"9 {k}", "text": f"v{k}"} for k in range(101)]).encode()
        timings = {}
        for mode in (Project.OverlapMode.INTER, Project.OverlapMode.ADAPTIVE):
            project = project_create(owner=lead, name=f"perf-{mode}", set_size=10, overlap_per_set=3, overlap_mode=mode)
            verses_import(project=project, data=verses, filename="v.json", create_batches=False)
            batch = batch_create(project=project, reference_id="9 0", candidate_ids=[f"9 {k}" for k in range(1, 101)],
                                 seed=1, name="b")
            for user in people:
                membership_add(project=project, username=user.username)
            times = []
            for _ in range(args.rounds):
                for user in people:
                    t = time.perf_counter()
                    annotation_set = set_next(batch=batch, annotator=user)
                    times.append(time.perf_counter() - t)
                    for item in annotation_set.assignments.select_related("pair"):
                        win = item.pair.verse_a_id if item.pair.verse_a_id % 3 else item.pair.verse_b_id
                        judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=win,
                                         client_uuid=uuid.uuid4())
            timings[mode] = times
            print(f"{mode:>9}: set_next median {statistics.median(times) * 1000:.1f} ms, "
                  f"p95 {np.percentile(times, 95) * 1000:.1f} ms over {len(times)} sets (100 candidates, 20 annotators, "
                  f"up to {len(times) * 10} judgements)")
        ratio = statistics.median(timings["adaptive"]) / statistics.median(timings["inter"])
        print(f"adaptive / inter-annotator median: {ratio:.2f}x (same run, same batch shape)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--coverage-seeds", type=int, default=20)
    parser.add_argument("--reference", default=None)
    parser.add_argument("--rounds", type=int, default=10, help="latency: sets per annotator")
    parser.add_argument("--latency-only", action="store_true")
    parser.add_argument("--design-only", action="store_true")
    args = parser.parse_args()
    if not args.design_only:
        latency_part(args)
    if not args.latency_only:
        design_part(args)


if __name__ == "__main__":
    main()
