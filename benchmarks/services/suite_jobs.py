"""The benchmark suite as a job (``benchmarks.suite``): validate a request, queue it, run it, keep its table.

Methods are the suite's method strings (:mod:`benchmarks.suite.suite`) minus ``file:``: another tool's file is
read from the command line only (a page never names a path). Each is configured once, when the job is queued
(``suite.configure_method``: ``registry.configure`` for every part), and the job carries the configurations
(``SuiteMethod.to_json``: each ``MethodConfig`` with its digest, the row's method string and its mode); the
worker reads them back (``SuiteMethod.from_json`` → ``registry.carried_config``) without validating them again.
A row queued before suite jobs carried configurations holds the method strings: each is configured once in the
worker, and one that no longer configures fails with a sentence saying the job is of the old shape. Benchmarks are the suite's registered ones
and stored versions the owner may read (``stored:NAME@VERSION``: gold a user promoted from verified workbench
parallels, or any version loaded by the dataset recipe), read from the database. The result is the one table's figures, fold
spread and paired tests, JSON-safe, kept as the job's result for the page.
"""
from __future__ import annotations

from benchmarks.services.runs import RunError
from benchmarks.suite.suite import split_methods
from benchmarks.suite.suite_commands import STORED, stored_key
from core.cli import CommandInputError
from core.numeric import json_safe
from jobs.services import job_create

SUITE_KIND = "benchmarks.suite"
MAX_METHODS = 12


def _methods(methods) -> list:
    """The requested method strings configured once (``SuiteMethod`` rows), or a ``RunError`` naming the method."""
    from benchmarks.suite.suite_commands import configure_methods

    items = [m.strip() for m in (split_methods(methods) if isinstance(methods, str) else methods or []) if m.strip()]
    if not items:
        raise RunError("methods: give at least one method (e.g. bm25-lemma, bm25-lemma>feature-ltr)")
    if len(items) > MAX_METHODS:
        raise RunError(f"methods: at most {MAX_METHODS} per suite run")
    for m in items:
        if m.startswith("file:"):
            raise RunError(f"methods: {m!r}: another tool's file is scored from the command line "
                           "(manage.py evaluate --suite --methods file:FORMAT:PATH), not from a page")
    try:
        return configure_methods(items)
    except CommandInputError as exc:
        raise RunError(f"methods: {exc}") from None


def stored_benchmark_choices(user) -> list[tuple[str, str]]:
    """``(key, label)`` of every stored version ``user`` may read, promoted ones (gold from verified workbench
    parallels) said so in the label."""
    from benchmarks.selectors import version_list

    out = []
    for v in version_list(user=user):
        promoted = (v.provenance or {}).get("promoted")
        label = (f"{v.benchmark.name} v{v.version} ({v.n_gold} gold pairs"
                 + (f", {promoted.get('added', 0)} promoted from workbench run {promoted.get('detection_run')}"
                    if promoted else "") + (", awaiting approval" if v.awaiting_approval else "") + ")")
        out.append((stored_key(v), label))
    return out


def _stored_version(key: str, user=None):
    from benchmarks.selectors import benchmark_version_named, versions_visible_to

    name, at, version = key.removeprefix(STORED).rpartition("@")
    found = benchmark_version_named(name, version) if at and name and version else None
    if found is not None and user is not None and not versions_visible_to(user).filter(pk=found.pk).exists():
        found = None
    if found is None:
        raise RunError(f"benchmarks: no stored version {key!r} (write {STORED}NAME@VERSION with a version you can "
                       "read, e.g. one listed on the suite page)")
    return found


def stored_suite_benchmark(key: str, user=None):
    """The suite benchmark of a stored version (``stored:NAME@VERSION``): its gold queries (typed gold; a query
    promoted from workbench verdicts without a fold is dealt one, ``splits.stored_split``), ranked against every
    source segment of the version's source corpus."""
    from benchmarks.loci import splits
    from benchmarks.services.runs import _benchmark_from_db
    from benchmarks.suite.suite import from_loci_benchmark

    version = _stored_version(key, user)
    bench = _benchmark_from_db(version)
    if not bench.gold:
        raise RunError(f"benchmarks: {key!r} holds no gold pair")
    promoted = (version.provenance or {}).get("promoted")
    notes = ([f"gold promoted from workbench detection run {promoted.get('detection_run')} by {promoted.get('by')} "
              f"({promoted.get('added', 0)} pairs added to {version.provenance.get('base_version')})"]
             if promoted else [])
    return from_loci_benchmark(key, bench, splits.stored_split(bench, "db"), [s.seg_id for s in bench.sources],
                               "corpus", notes)


def suite_jobs_visible_to(user, *, limit: int = 10) -> list:
    """The latest suite jobs (the suite page's tables), less those about a version `user` may not read
    (`benchmarks.selectors.jobs_visible_to`)."""
    from benchmarks.selectors import jobs_visible_to
    from jobs.models import Job

    return jobs_visible_to(user, Job.objects.filter(kind=SUITE_KIND).order_by("-created", "-id"), limit=limit)


def suite_job_create(*, methods, benchmarks, owner=None):
    from benchmarks.suite.suite import BENCHMARKS

    methods = _methods(methods)
    names = list(benchmarks or [])
    unknown = [n for n in names if n not in BENCHMARKS and not n.startswith(STORED)]
    if not names or unknown:
        raise RunError(f"benchmarks: choose from {', '.join(BENCHMARKS)} or a stored version ({STORED}NAME@VERSION)"
                       + (f" ({', '.join(map(repr, unknown))} is not one)" if unknown else ""))
    for n in names:
        if n.startswith(STORED):
            _stored_version(n, owner)  # exists and the owner may read it
    return job_create(kind=SUITE_KIND, owner=owner, queue="cpu",
                      params={"methods": [m.to_json() for m in methods], "benchmarks": names})


def carried_methods(methods) -> list:
    """The rows a suite job carries, read back before any work (``SuiteMethod.from_json``: each configuration's
    digest checked, not validated again; an old row's method strings configured once)."""
    from benchmarks.suite.suite import SuiteMethod

    if not isinstance(methods, list) or not methods:
        raise RunError("the suite job carries no method: queue it again")
    return [SuiteMethod.from_json(m) for m in methods]


def suite_job_execute(job, *, methods: list, benchmarks: list[str]) -> dict:
    from benchmarks.suite import expected
    from benchmarks.suite import suite as S

    configured = carried_methods(methods)

    benches = {}
    for i, name in enumerate(benchmarks):
        job.progress(0.02 + 0.08 * i / len(benchmarks), f"loading {name}")
        benches[name] = (stored_suite_benchmark(name, job.job.owner) if name.startswith(STORED)
                         else S.BENCHMARKS[name]())
    steps = len(configured) * len(benches)
    done = [0]

    def prog(message: str) -> None:
        if ": " in message and ">" not in message.split(": ", 1)[0]:
            done[0] += 1
        job.progress(0.1 + 0.85 * min(done[0], steps) / steps, message)

    report = S.run_suite(configured, benches, progress=prog)
    rows = {b: {m: {"mean": r["mean"], "fold_std": r["fold_std"], "global_recall": r["global_recall"],
                    "by_class": r["by_class"], "vs_first": r.get("vs_first"), "n_queries": r["n_queries"],
                    "leaked_queries": (r.get("training") or {}).get("leaked_queries")}
                for m, r in rs.items()} for b, rs in report["rows"].items()}
    return json_safe({"methods": report["methods"], "benchmarks": report["benchmarks"], "rows": rows,
                      "figures": expected.figures_of(report), "table": S.markdown(report)})
