"""The benchmark suite as a job (``benchmarks.suite``): validate a request, queue it, run it, keep its table.

Methods are the suite's method strings (:mod:`benchmarks.suite.suite`) minus ``file:``: another tool's file is
read from the command line only (a page never names a path). The result is the one table's figures, fold
spread and paired tests, JSON-safe, kept as the job's result for the page.
"""
from __future__ import annotations

from benchmarks.services.runs import RunError
from core.cli import CommandInputError
from core.numeric import json_safe
from jobs.services import job_create

SUITE_KIND = "benchmarks.suite"
MAX_METHODS = 12


def _methods(methods) -> list[str]:
    from benchmarks.suite.suite_commands import validate_methods

    items = [m.strip() for m in (methods.split(",") if isinstance(methods, str) else methods or []) if m.strip()]
    if not items:
        raise RunError("methods: give at least one method (e.g. bm25-lemma, bm25-lemma>feature-ltr)")
    if len(items) > MAX_METHODS:
        raise RunError(f"methods: at most {MAX_METHODS} per suite run")
    for m in items:
        if m.startswith("file:"):
            raise RunError(f"methods: {m!r}: another tool's file is scored from the command line "
                           "(manage.py evaluate --suite --methods file:FORMAT:PATH), not from a page")
    try:
        return validate_methods(items)
    except CommandInputError as exc:
        raise RunError(f"methods: {exc}") from None


def suite_job_create(*, methods, benchmarks, owner=None):
    from benchmarks.suite.suite import BENCHMARKS

    methods = _methods(methods)
    names = list(benchmarks or [])
    unknown = [n for n in names if n not in BENCHMARKS]
    if not names or unknown:
        raise RunError(f"benchmarks: choose from {', '.join(BENCHMARKS)}"
                       + (f" ({', '.join(map(repr, unknown))} is not one)" if unknown else ""))
    return job_create(kind=SUITE_KIND, owner=owner, queue="cpu", params={"methods": methods, "benchmarks": names})


def suite_job_execute(job, *, methods: list[str], benchmarks: list[str]) -> dict:
    from benchmarks.suite import expected
    from benchmarks.suite import suite as S

    benches = {}
    for i, name in enumerate(benchmarks):
        job.progress(0.02 + 0.08 * i / len(benchmarks), f"loading {name}")
        benches[name] = S.BENCHMARKS[name]()
    steps = len(methods) * len(benches)
    done = [0]

    def prog(message: str) -> None:
        if ": " in message and ">" not in message.split(": ", 1)[0]:
            done[0] += 1
        job.progress(0.1 + 0.85 * min(done[0], steps) / steps, message)

    report = S.run_suite(_methods(methods), benches, progress=prog)
    rows = {b: {m: {"mean": r["mean"], "fold_std": r["fold_std"], "global_recall": r["global_recall"],
                    "by_class": r["by_class"], "vs_first": r.get("vs_first"), "n_queries": r["n_queries"],
                    "leaked_queries": (r.get("training") or {}).get("leaked_queries")}
                for m, r in rs.items()} for b, rs in report["rows"].items()}
    return json_safe({"methods": methods, "benchmarks": report["benchmarks"], "rows": rows,
                      "figures": expected.figures_of(report), "table": S.markdown(report)})
