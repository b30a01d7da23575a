"""Command line of the suite (pure; ``manage.py evaluate --suite`` calls :func:`run_suite_command`)::

    python -m benchmarks.suite.suite_commands [--methods channels,bm25-lemma,channels>feature-ltr@lobo]
        [--benchmarks loci-similes,lucan-vergil] [--corpus-dir DIR] [--output report.json] [--markdown table.md]
        [--expected perf/expected/NAME.yaml (re-run it and fail on drift)] [--write-expected NAME.yaml]
        [--export DIR (qrels, BEIR folders, TREC runs)]

A method may be another tool's file: ``file:tesserae-csv:results.csv`` (formats: trec, tesserae-csv, tesserae-xml,
locisimiles, passim).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time

from core.cli import CommandInputError

from . import expected as E
from . import suite as S

# the default first stage (``channels``, its profile each benchmark's text type) first, then the baselines
STANDARD_METHODS = ("channels", "bm25-lemma", "tesserae", "rrf:bm25-lemma+tesserae", "channels>feature-ltr@lobo",
                    "bm25-lemma>feature-ltr@lobo")


def configure_methods(methods) -> list[S.SuiteMethod]:
    """Every method string configured once (:func:`.suite.configure_method`: every part a registered method of
    the right kind, the reranker's parameters validated by the registry); the error names the method."""
    out = []
    for spec in methods:
        try:
            out.append(S.configure_method(spec))
        except (KeyError, ValueError) as exc:
            raise CommandInputError(f"method {spec.strip()!r}: {exc}") from None
    if not out:
        raise CommandInputError("no method given")
    return out


STORED = "stored:"  # stored:NAME@VERSION, a benchmark version in the database (manage.py evaluate --suite only)


def stored_key(version) -> str:
    """The suite's name of a stored benchmark version: ``stored:NAME@VERSION``."""
    return f"{STORED}{version.benchmark.name}@{version.version}"


def _benchmarks(names, corpus_dir, stored=None):
    """The suite benchmarks by name; ``stored`` reads a ``stored:NAME@VERSION`` one (given by the Django command:
    this module does not read the database)."""
    out = {}
    for n in names:
        if n.startswith(STORED):
            if stored is None:
                raise CommandInputError(f"benchmark {n!r}: a stored version is read from the database: run "
                                        "manage.py evaluate --suite")
            out[n] = stored(n)
            continue
        if n not in S.BENCHMARKS:
            raise CommandInputError(f"unknown benchmark {n!r}: one of {', '.join(S.BENCHMARKS)} or "
                                    f"{STORED}NAME@VERSION (a stored version)")
        out[n] = S.BENCHMARKS[n](**({"corpus_dir": corpus_dir} if n == "loci-similes" else {}))
    return out


def machine_notes(seconds: float) -> dict:
    import numpy
    import scipy
    import sklearn

    return {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {platform.system()}",
            "python": platform.python_version(),
            "libraries": {"numpy": numpy.__version__, "scipy": scipy.__version__, "scikit-learn": sklearn.__version__},
            "seconds": round(seconds, 1)}


def run_suite_command(*, methods=None, benchmarks=None, corpus_dir=None, output=None, markdown=None,
                      expected=None, write_expected=None, export=None, stdout=None, stderr=None,
                      stored=None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    t = time.perf_counter()

    def prog(msg):
        err.write(f"[{time.perf_counter() - t:7.1f} s] {msg}\n")

    if expected:
        spec = E.load(expected)
        report = E.run_expected(spec, progress=prog)
        problems = E.drift(spec, report)
        for p in problems:
            out.write(f"DRIFT {p}\n")
        out.write(f"{spec['name']}: {'drift in ' + str(len(problems)) + ' figures' if problems else 'all figures hold'}"
                  f" ({time.perf_counter() - t:.0f} s)\n")
        return 1 if problems else 0
    configured = configure_methods(methods or STANDARD_METHODS)
    methods = [m.display for m in configured]
    names = list(benchmarks or S.BENCHMARKS)
    try:
        report = S.run_suite(configured, _benchmarks(names, corpus_dir, stored), progress=prog, export_dir=export)
    except (ValueError, OSError) as exc:  # an unreadable or malformed imported file: the message names the line
        raise CommandInputError(str(exc)) from None
    for line in report.get("skipped", []):
        err.write(f"skipped {line}\n")
    seconds = time.perf_counter() - t
    report["seconds"] = seconds
    table = S.markdown(report)
    out.write(table)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1, default=float)
    if markdown:
        with open(markdown, "w", encoding="utf-8") as fh:
            fh.write(table)
    if write_expected:
        command = (f"manage.py evaluate --suite --methods '{','.join(methods)}' --benchmarks {','.join(names)}"
                   + (f" --corpus-dir {corpus_dir}" if corpus_dir else ""))
        with open(write_expected, "w", encoding="utf-8") as fh:
            fh.write(E.render(str(write_expected).rsplit("/", 1)[-1].removesuffix(".yaml"), command,
                              {"methods": methods, "benchmarks": names, "corpus_dir": corpus_dir, "depth": 1000,
                               "rerank_depth": 100}, report, tolerance=0.0005, measured=machine_notes(seconds)))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.suite.suite_commands")
    p.add_argument("--methods", default=None, help=f"comma-separated (default: {','.join(STANDARD_METHODS)})")
    p.add_argument("--benchmarks", default=None, help=f"comma-separated (default: {','.join(S.BENCHMARKS)})")
    p.add_argument("--corpus-dir", default=None)
    p.add_argument("--output")
    p.add_argument("--markdown")
    p.add_argument("--expected")
    p.add_argument("--write-expected")
    p.add_argument("--export", help="folder: qrels, BEIR folders (all and per fold) and every method's TREC run")
    a = p.parse_args(argv)
    try:
        return run_suite_command(methods=S.split_methods(a.methods) if a.methods else None,
                                 benchmarks=a.benchmarks.split(",") if a.benchmarks else None,
                                 corpus_dir=a.corpus_dir, output=a.output, markdown=a.markdown, expected=a.expected,
                                 write_expected=a.write_expected, export=a.export)
    except CommandInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
