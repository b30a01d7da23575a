"""Command line for the Greek STS benchmark and the DBBE pilots (no database, no Django needed).

    python -m benchmarks.greek_sts.sts_commands evaluate --gold STS.tsv --method semantic_edit --output report.json
    python -m benchmarks.greek_sts.sts_commands sweep --verses dbbe_verses_sample.csv --level verse --method NAME --output sweep.csv
    python -m benchmarks.greek_sts.sts_commands evaluate --method list

The Django commands ``evaluate_similarity`` and ``pilot_sweep`` call :func:`evaluate_command` /
:func:`sweep_command` with the same options (see :func:`add_evaluate_arguments`, :func:`add_sweep_arguments`),
which call the keyword-only :func:`run_evaluate` / :func:`run_sweep`. Options follow the project's command-line
convention (:mod:`core.cli`); bad input raises :class:`core.cli.CommandInputError`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TextIO

from core.cli import CommandInputError, add_method_arguments, method_command, parse_params, user_errors
from detection.methods import ParamError, UnknownMethod


def _listing() -> str:
    from detection.methods import registry

    return registry.format_specs(kind="pair_scorer", language="grc")


def _common_arguments(parser) -> None:
    add_method_arguments(parser, default="", what="similarity method")
    parser.add_argument("--corpus", action="append", default=None, metavar="PATH",
                        help="training texts for static embeddings (repeatable; default: the input file plus "
                             "STS_benchmark_medievalGreek.tsv, dbbe_verses_sample.csv and "
                             "lingAnn_GS_medievalGreek.tsv when found beside it)")
    parser.add_argument("--output", default=None, help="output file (default: stdout)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def add_evaluate_arguments(parser) -> None:
    parser.add_argument("--gold", default=None, help="gold TSV (reference, candidate, texts, score)")
    parser.add_argument("--calibration", choices=["none", "linear", "isotonic"], default="none",
                        help="leave-one-reference-out calibration of the scores to the gold scale")
    parser.add_argument("--plot", default=None, help="also write the predicted-vs-gold scatter as SVG")
    _common_arguments(parser)


def add_sweep_arguments(parser) -> None:
    parser.add_argument("--verses", default=None, help="verses CSV (dbbe_verses_sample.csv)")
    parser.add_argument("--level", choices=["verse", "type"], default="verse")
    parser.add_argument("--report-json", default=None, help="also write the full result (counts, best) as JSON")
    parser.add_argument("--plot", default=None, help="also write the P/R/F1-vs-threshold plot as SVG")
    _common_arguments(parser)


def _progress(quiet: bool, stderr: TextIO):
    if quiet:
        return None
    last = [-1.0]

    def report(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.1 or fraction >= 1.0:
            last[0] = fraction
            stderr.write(f"[{fraction:4.0%}] {message}\n")

    return report


def _build_method(*, method: str, params: dict, corpus, input_path: str, threads, quiet: bool, stderr: TextIO):
    from benchmarks.greek_sts.training_texts import default_corpus_paths, training_corpus
    from detection.methods.greek.greek_registry import get_method

    if threads:
        import torch

        torch.set_num_threads(int(threads))
    with user_errors(ParamError, UnknownMethod, TypeError):
        method = get_method(method, **params)
    paths = corpus or default_corpus_paths(input_path)
    with user_errors(OSError, ValueError):
        texts = training_corpus(paths)
    t0 = time.perf_counter()
    method.fit(texts)
    info = {"corpus": [str(p) for p in paths], "n_texts": len(texts), "fit_seconds": time.perf_counter() - t0}
    if not quiet:
        stderr.write(f"fitted {method.name} on {len(texts)} texts in {info['fit_seconds']:.1f}s\n")
    return method, info


def _write(path, text: str, stdout: TextIO) -> None:
    if path in (None, "-"):
        stdout.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")


_EVALUATE_OPTIONS = ("gold", "method", "calibration", "corpus", "output", "plot", "threads", "quiet")
_SWEEP_OPTIONS = ("verses", "level", "method", "corpus", "output", "report_json", "plot", "threads", "quiet")


def evaluate_command(options: dict, *, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> dict | None:
    """``evaluate`` from parsed options (shared by ``python -m`` and ``manage.py evaluate_similarity``)."""
    if not method_command(options, required=("gold",), listing=_listing, stdout=stdout):
        return None
    return run_evaluate(**{k: options.get(k) for k in _EVALUATE_OPTIONS}, params=parse_params(options.get("param")),
                        stdout=stdout, stderr=stderr)


def sweep_command(options: dict, *, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr):
    """``sweep`` from parsed options (shared by ``python -m`` and ``manage.py pilot_sweep``)."""
    if not method_command(options, required=("verses",), listing=_listing, stdout=stdout):
        return None
    return run_sweep(**{k: options.get(k) for k in _SWEEP_OPTIONS}, params=parse_params(options.get("param")),
                     stdout=stdout, stderr=stderr)


def run_evaluate(*, gold, method: str, params: dict | None = None, calibration: str | None = "none", corpus=None,
                 output=None, plot=None, threads=None, quiet: bool = False, stdout: TextIO = sys.stdout,
                 stderr: TextIO = sys.stderr) -> dict:
    """Score ``method`` on the gold TSV ``gold``; writes the report JSON to ``output`` (stdout when None)."""
    from benchmarks.greek_sts.evaluate import evaluate_method
    from benchmarks.greek_sts.gold_files import GoldFormatError, read_sts_gold

    with user_errors(GoldFormatError, OSError):
        pairs = read_sts_gold(gold)
    scorer, fit_info = _build_method(method=method, params=params or {}, corpus=corpus, input_path=gold,
                                     threads=threads, quiet=quiet, stderr=stderr)
    calibration = None if calibration in (None, "none") else calibration
    t0 = time.perf_counter()
    report = evaluate_method(pairs, scorer, calibration=calibration, progress=_progress(quiet, stderr))
    report["timing"] = {"fit_seconds": fit_info["fit_seconds"], "evaluate_seconds": time.perf_counter() - t0}
    report["training"] = {"corpus": fit_info["corpus"], "n_texts": fit_info["n_texts"]}
    report["gold_file"] = str(gold)
    _write(output, json.dumps(report, ensure_ascii=False, indent=2) + "\n", stdout)
    if plot:
        from benchmarks.greek_sts.plots import scatter_svg

        preds = report["predictions"]
        Path(plot).write_text(scatter_svg([p["predicted"] for p in preds], [p["gold"] for p in preds],
                                          [p["reference_id"] for p in preds],
                                          title=f"{scorer.name}: predicted vs gold"), encoding="utf-8")
    if output not in (None, "-") and not quiet:
        stderr.write(f"{scorer.name}: RMSE {report['rmse']:.4f}  Spearman {report['spearman']}  "
                     f"Pearson {report['pearson']}  → {output}\n")
    return report


def run_sweep(*, verses, method: str, params: dict | None = None, level: str | None = "verse", corpus=None,
              output=None, report_json=None, plot=None, threads=None, quiet: bool = False,
              stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr):
    """The DBBE pilot threshold sweep of ``method`` on ``verses``; writes the sweep CSV to ``output``."""
    from benchmarks.greek_sts.pilots import DEFAULT_THRESHOLDS, PAPER_F1, read_verses_csv, sweep, write_sweep_csv

    with user_errors(ValueError, OSError):
        verse_rows = read_verses_csv(verses)
    scorer, fit_info = _build_method(method=method, params=params or {}, corpus=corpus, input_path=verses,
                                     threads=threads, quiet=quiet, stderr=stderr)
    level = level or "verse"
    t0 = time.perf_counter()
    result = sweep(verse_rows, level=level, method=scorer, progress=_progress(quiet, stderr))
    seconds = time.perf_counter() - t0
    _write(output, write_sweep_csv(result.rows), stdout)
    if report_json:
        data = result.to_dict()
        data["timing"] = {"fit_seconds": fit_info["fit_seconds"], "sweep_seconds": seconds}
        data["training"] = {"corpus": fit_info["corpus"], "n_texts": fit_info["n_texts"]}
        Path(report_json).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if plot:
        from benchmarks.greek_sts.plots import threshold_plot_svg

        ref = list(zip(DEFAULT_THRESHOLDS.tolist(), PAPER_F1[level]))
        Path(plot).write_text(threshold_plot_svg(result.rows, title=f"{scorer.name}, {level} level",
                                                 reference_f1=ref), encoding="utf-8")
    if not quiet:
        b = result.best
        stderr.write(f"{scorer.name} {level}: best F1 {b.f1:.3f} at {b.threshold:.2f} (P {b.precision:.3f}, "
                     f"R {b.recall:.3f}); {result.n_pairs} pairs, {result.n_positive} positive; {seconds:.1f}s\n")
    return result


def main(argv=None, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.greek_sts.sts_commands", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_evaluate_arguments(sub.add_parser("evaluate", aliases=["evaluate_similarity"], help="score a method on a gold set"))
    add_sweep_arguments(sub.add_parser("sweep", aliases=["pilot_sweep"], help="DBBE verse/type pilot threshold sweep"))
    args = parser.parse_args(argv)
    options = vars(args)
    try:
        if args.command in ("evaluate", "evaluate_similarity"):
            evaluate_command(options, stdout=stdout, stderr=stderr)
        else:
            sweep_command(options, stdout=stdout, stderr=stderr)
    except CommandInputError as exc:
        stderr.write(f"error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
