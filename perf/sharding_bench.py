"""One sharded detection job (or, with --evaluate, one sharded Loci Similes evaluation run) on 1 and then 2
real Celery workers: wall time, speed-up, worker memory.

    .venv/bin/python perf/sharding_bench.py [--corpus DIR] [--method tesserae] [--queries 8000] [--k 100]
        [--shard-size 1000] [--workers 1,2]
    .venv/bin/python perf/sharding_bench.py --evaluate [--corpus DIR] [--methods bm25-lemma,tesserae] [--shards 4]
    .venv/bin/python perf/sharding_bench.py --evaluate --first-job [--methods bm25-lemma] [--repeat 2]

--first-job measures what a worker's preload (`JOB_WORKER_PRELOAD`: simplemma's Latin dictionary, loaded in the
job process before the worker says it is ready) moves out of the first job: per method, a one-shard evaluation
with the index cache warm on a fresh worker with `SIMILIA_WORKER_PRELOAD=0` and with it on (off, on, on, off
with `--repeat 2`), printing each worker's start-to-ready time and the job's time from queueing to the stored
report, and the ratio; the reports' sha256 must be the same.

--evaluate imports the 545-pair benchmark matched onto the whole corpus (queries and sources of
`build_corpus`) and, for each of `--methods`, queues `benchmarks.loci_evaluate` runs on pool "corpus": with
one worker a one-shard run (the reference), then the `--shards` run on 1, 2, 2 and 1 workers (ABBA, so a
drift in the shared machine's load cancels; `--repeat 1`: once each), each sharded run first with an empty
index cache (`VAR_DIR/index-cache`: the plan fits the pool) and then warm (the plan and the shards on the other
worker load the cached index), and a one-shard run cold then warm (a second evaluation of the same data), fresh
worker processes for every run.
Printed per run: wall time from queueing to the stored report, where it went (delivery, the parent's plan:
loading the benchmark, fitting the pool and saving its index; the shards' span with each shard's index source
and search time; the merge), and the sha256 of the stored report (without its timing), per-query rows and
summary, which must be the one of the one-shard run; then the speed-up of 2 vs 1 workers per method.

Builds a throw-away SQLite database and filesystem broker in a temporary folder (test settings, real
broker delivery), stores the Loci Similes query and source corpora as two corpora, then for each worker
count (the index cache emptied first, so each fits once) starts that many `celery worker --pool solo` processes, queues one `benchmarks.detect` job and waits
for its merge. Printed per run: wall time from queueing to the merged result, shards per worker process,
index loads, the largest worker's peak RSS (sampled every 0.2 s), and the merged result's sha256, which must
be the same for every worker count.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from core.paths import shared_data_dir  # noqa: E402  (pure: no Django)


def load(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [(r["seg_id"], r["text"]) for r in rows]


def start_workers(n: int, env: dict, log_dir: Path) -> list[tuple[subprocess.Popen, Path]]:
    """Start ``n`` solo workers and wait until each says it is ready."""
    workers = []
    for i in range(n):
        log = log_dir / f"worker-{n}-{i}.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "cpu", "--pool", "solo", "-n",
             f"bench{i}@%h", "-l", "info", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        workers.append((proc, log))
    for proc, log in workers:
        deadline = time.monotonic() + 180
        while "ready." not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker did not start:\n{log.read_text()}")
            time.sleep(0.2)
    return workers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--texts", default=str(shared_data_dir() / "latin_texts"))
    ap.add_argument("--method", default="tesserae")
    ap.add_argument("--queries", type=int, default=8000, help="query segments stored (0 = all)")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--shard-size", type=int, default=1000)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--evaluate", action="store_true", help="a Loci Similes evaluation run instead of a detection")
    ap.add_argument("--shards", type=int, default=4, help="--evaluate: shards of the run")
    ap.add_argument("--methods", default="bm25-lemma,tesserae", help="--evaluate: methods, comma-separated")
    ap.add_argument("--repeat", type=int, default=2, help="--evaluate: 2 = each worker count twice, ABBA order")
    ap.add_argument("--first-job", action="store_true", help="--evaluate: the first job on a fresh worker, with "
                    "and without the worker's preload")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not (corpus / "source.csv").exists():
        from detection.latin.loci_corpus import build_corpus

        build_corpus(args.texts, corpus)
    tmp = Path(tempfile.mkdtemp(prefix="similia-sharding-"))
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.test", SIMILIA_VAR_DIR=str(tmp),
               DATABASE_URL=f"sqlite:///{tmp / 'bench.sqlite3'}", CELERY_TASK_ALWAYS_EAGER="false")
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from benchmarks.models import Corpus, Segment
    from detection.services.detection import detection_job_create

    call_command("migrate", verbosity=0)
    if args.evaluate:
        return evaluate(args, corpus, env, tmp)
    else:
        queries = load(corpus / "query.csv")
        queries = queries[: args.queries] if args.queries else queries
        sources = load(corpus / "source.csv")
        stored = []
        for name, side, rows in [("bench queries", "query", queries), ("bench sources", "source", sources)]:
            c = Corpus.objects.create(name=name, side=side)
            Segment.objects.bulk_create((Segment(corpus=c, seg_id=s, text=t) for s, t in rows), batch_size=5000)
            stored.append(c)
        print(f"{args.method} top-{args.k}: {len(queries)} queries x {len(sources)} sources, shards of "
              f"{args.shard_size}; cores {os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}", flush=True)

        def queue():
            return detection_job_create(query_corpus=stored[0], source_corpus=stored[1], method=args.method,
                                        k=args.k, shard_size=args.shard_size)
    walls = {}
    for n in [int(x) for x in args.workers.split(",")]:
        shutil.rmtree(tmp / "index-cache", ignore_errors=True)  # every worker count starts with no fitted index
        workers = start_workers(n, env, tmp)
        job, wall, peak = run_on_workers(workers, queue)
        walls[n] = wall
        r = job.result
        same = f"sha256 {r['sha256'][:16]}"
        print(f"{n} worker(s): {wall:7.1f} s from queueing to merged result; shards per worker process "
              f"{sorted(r['shards_per_worker'].values())}, index loads {r['index_loads']} (fitted {r.get('index_builds')}, from the index cache {r.get('index_cache_loads')}), largest worker peak "
              f"RSS {peak / 2**20:.0f} MiB; {same}; load avg {os.getloadavg()[0]:.1f}", flush=True)
    if len(walls) > 1:
        base = min(walls)
        for n, wall in sorted(walls.items()):
            if n == base:
                continue
            print(f"speed-up {n} vs {base} worker(s): {walls[base] / wall:.2f}x")


def stop_workers(workers) -> None:
    for p, _ in workers:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=60)


def run_on_workers(workers, queue):
    """Queue a job (``queue()`` returns its Job row), wait for it while sampling the workers' memory, then stop
    the workers: (job, wall seconds from queueing, the largest worker's peak RSS in bytes); SystemExit unless it
    succeeded."""
    import psutil

    from jobs.models import Job

    procs = [psutil.Process(p.pid) for p, _ in workers]
    peak = 0
    job = queue()
    t0 = time.perf_counter()
    while True:
        job.refresh_from_db()
        if job.status in Job.FINISHED:
            break
        peak = max([peak] + [p.memory_info().rss for p in procs if p.is_running()])
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    stop_workers(workers)
    if job.status != "succeeded":
        raise SystemExit(f"job {job.pk} {job.status}: {job.error}")
    return job, wall, peak


def report_hash(run) -> str:
    """sha256 of what a run measured: the report without its timing, the per-query rows, the summary."""
    run.refresh_from_db()
    report = {k: v for k, v in run.report.items() if k not in ("timing", "pairwise")}
    report["pairwise"] = {k: v for k, v in run.report["pairwise"].items() if k != "timing"}
    blob = json.dumps({"report": report, "per_query": run.per_query, "summary": run.summary}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def phases(job) -> str:
    """Where a run's wall time went, from the Job rows' timestamps and the shards' results."""
    from jobs.models import Job

    shards = list(Job.objects.filter(parent=job).order_by("shard_index"))
    deliver = (job.started - job.enqueued).total_seconds() if job.enqueued else float("nan")
    if not shards:
        return f"delivery {deliver:.1f} s, one shard in the job {(job.finished - job.started).total_seconds():.1f} s"
    plan = (min(s.created for s in shards) - job.started).total_seconds()
    first, last = min(s.started for s in shards), max(s.finished for s in shards)
    parts = ", ".join(f"{s.result['index']} {s.result['fit_s']:.2f}+{s.result['search_s']:.2f}" for s in shards)
    return (f"delivery {deliver:.1f} s, plan (load + fit or cached index) {plan:.1f} s, to first shard "
            f"{(first - min(s.created for s in shards)).total_seconds():.1f} s, shards span "
            f"{(last - first).total_seconds():.1f} s [index ready+search s: {parts}], merge report "
            f"{job.result['merge_report_s']:.1f} s (benchmark reused: {job.result['merge_benchmark_reused']})")


def evaluate(args, corpus: Path, env: dict, tmp: Path) -> None:

    from benchmarks.models import EvaluationRun
    from benchmarks.services import benchmark_import_545, evaluation_run_create

    t = time.perf_counter()
    loci = ROOT / "data" / "locisimiles"
    version, _ = benchmark_import_545(with_text_path=loci / "pairs_545_with_text.csv",
                                      ref_type_path=loci / "pairs_545_ref_type.csv", corpus_dir=corpus)
    methods = args.methods.split(",")
    if args.first_job:
        return first_job(args, version, methods, env, tmp)
    print(f"Loci Similes evaluation of {', '.join(methods)}, pool corpus ({version.source_corpus.segments.count()} "
          f"sources), {args.shards} shards; version imported in {time.perf_counter() - t:.1f} s; cores "
          f"{os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}", flush=True)
    walls: dict = {}
    hashes: dict = {}
    differs: list = []
    counts = [int(x) for x in args.workers.split(",")]
    order = counts + counts[::-1] if args.repeat > 1 else counts  # ABBA: drift in the machine's load cancels
    cache_dir = tmp / "index-cache"
    # (workers, shards, cache): a one-shard run with a cold cache (the reference report, and a first evaluation),
    # the same again with the cache it filled (a second evaluation); then per worker count the sharded run cold
    # (cache emptied first) and warm (the cache the cold run filled)
    plan = [(counts[0], 1, "cold"), (counts[0], 1, "warm")] + [(n, args.shards, c) for n in order
                                                                for c in ("cold", "warm")]
    for method in methods:
        for n, shards, cache in plan:
            if cache == "cold":
                shutil.rmtree(cache_dir, ignore_errors=True)
            workers = start_workers(n, env, tmp)  # fresh worker processes for every run: each starts cold
            runs = []

            def queue():
                runs.append(evaluation_run_create(version=version, method=method, ks=[1, 10, 100], pool="corpus",
                                                  shards=shards))
                return runs[-1].job

            job, wall, peak = run_on_workers(workers, queue)
            run = runs[0]
            r = job.result
            digest = report_hash(EvaluationRun.objects.get(pk=run.pk))
            hashes.setdefault(method, digest)
            if digest != hashes[method]:
                differs.append((method, n, shards, cache))
            walls.setdefault((method, n, shards, cache), []).append(wall)
            print(f"{method}, {n} worker(s), {shards} shard(s), {cache} index cache: {wall:6.1f} s from queueing to "
                  f"the stored report; shards per worker process "
                  f"{sorted(r.get('shards_per_worker', {}).values()) or [1]}, pool fitted {r.get('index_builds')}x, "
                  f"loaded from the index cache {r.get('index_cache_loads')}x; largest worker peak RSS "
                  f"{peak / 2**20:.0f} MiB; R@10 {r['recall@10']:.4f}; report sha256 {digest[:16]} "
                  f"({'same as' if digest == hashes[method] else 'DIFFERS from'} the first run); "
                  f"load avg {os.getloadavg()[0]:.1f}", flush=True)
            print(f"    {phases(job)}", flush=True)
    for method in methods:
        def mean(n, shards, cache):
            w = walls.get((method, n, shards, cache), [])
            return sum(w) / len(w) if w else float("nan")

        one_cold, one_warm = mean(counts[0], 1, "cold"), mean(counts[0], 1, "warm")
        print(f"{method}: a second evaluation (one shard) with the cached index {one_warm:.1f} s vs {one_cold:.1f} s "
              f"cold: {one_cold / one_warm:.2f}x")
        base = counts[0]
        for cache in ("cold", "warm"):
            for n in counts[1:]:
                print(f"{method}: speed-up {n} vs {base} worker(s), {args.shards} shards, {cache} index cache: "
                      f"{mean(base, args.shards, cache) / mean(n, args.shards, cache):.2f}x "
                      f"({mean(base, args.shards, cache):.1f} s vs {mean(n, args.shards, cache):.1f} s)")
        for n in counts:
            print(f"{method}: {n} worker(s), {args.shards} shards, warm vs cold index cache: "
                  f"{mean(n, args.shards, 'cold') / mean(n, args.shards, 'warm'):.2f}x "
                  f"({mean(n, args.shards, 'warm'):.1f} s vs {mean(n, args.shards, 'cold'):.1f} s)")
    print(f"runs whose report differs from the first run's of their method: {differs or 'none'}")


def first_job(args, version, methods, env: dict, tmp: Path) -> None:
    """A one-shard evaluation (index cache warm) on a fresh worker, without and with the worker's preload."""
    from benchmarks.models import EvaluationRun
    from benchmarks.services import evaluation_run_create

    order = ["off", "on", "on", "off"] if args.repeat > 1 else ["off", "on"]
    print(f"first job on a fresh worker, SIMILIA_WORKER_PRELOAD {', '.join(order)}; cores {os.cpu_count()}, "
          f"load avg {os.getloadavg()[0]:.1f}", flush=True)
    for method in methods:
        walls: dict = {"off": [], "on": []}
        starts: dict = {"off": [], "on": []}
        digests = set()
        warm = evaluation_run_create(version=version, method=method, ks=[1, 10, 100], pool="corpus", shards=1)
        run_on_workers(start_workers(1, env, tmp), lambda: warm.job)  # fills the index cache
        for preload in order:
            t = time.perf_counter()
            workers = start_workers(1, dict(env, SIMILIA_WORKER_PRELOAD="1" if preload == "on" else "0"), tmp)
            started = time.perf_counter() - t
            runs = []

            def queue():
                runs.append(evaluation_run_create(version=version, method=method, ks=[1, 10, 100], pool="corpus",
                                                  shards=1))
                return runs[-1].job

            job, wall, _ = run_on_workers(workers, queue)
            digests.add(report_hash(EvaluationRun.objects.get(pk=runs[0].pk)))
            walls[preload].append(wall)
            starts[preload].append(started)
            print(f"{method}, preload {preload}: worker ready in {started:.1f} s, first job {wall:.1f} s from queueing "
                  f"to the stored report (index cache loads {job.result.get('index_cache_loads')}); "
                  f"load avg {os.getloadavg()[0]:.1f}", flush=True)
        off, on = (sum(walls[k]) / len(walls[k]) for k in ("off", "on"))
        s_off, s_on = (sum(starts[k]) / len(starts[k]) for k in ("off", "on"))
        print(f"{method}: first job {on:.2f} s with the preload vs {off:.2f} s without: {off / on:.2f}x; worker "
              f"start {s_on:.2f} s vs {s_off:.2f} s (+{s_on - s_off:.2f} s, once per worker process); "
              f"reports {'identical' if len(digests) == 1 else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
