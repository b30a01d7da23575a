"""Command line for the Greek STS benchmark and the DBBE pilots (no database, no Django needed).

    python -m benchmarks.greek_sts.cli evaluate --gold STS.tsv --method semantic_edit --output report.json
    python -m benchmarks.greek_sts.cli sweep --verses dbbe_verses_sample.csv --level verse --method NAME --output sweep.csv
    python -m benchmarks.greek_sts.cli evaluate --method list

The Django commands ``evaluate_similarity`` and ``pilot_sweep`` call :func:`run_evaluate` / :func:`run_sweep`
with the same options (see :func:`add_evaluate_arguments`, :func:`add_sweep_arguments`).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TextIO


class CommandError(Exception):
    """Bad command-line input (the Django wrappers turn it into django's CommandError)."""


def _parse_params(items) -> dict:
    out = {}
    for item in items or []:
        if "=" not in item:
            raise CommandError(f"--param expects key=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def print_methods(stdout: TextIO) -> None:
    from detection.methods.greek_registry import method_specs

    for spec in method_specs():
        defaults = ", ".join(f"{k}={v!r}" for k, v in spec["defaults"].items())
        need = "  [needs --param model=NAME_OR_PATH]" if spec["needs_model"] else ""
        stdout.write(f"{spec['name']:<28} {spec['description']}{need}\n")
        if defaults:
            stdout.write(f"{'':<28}   defaults: {defaults}\n")


def _common_arguments(parser) -> None:
    parser.add_argument("--method", default=None, help="registry name; 'list' prints the registry")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="method parameter (JSON value or string), repeatable, e.g. --param model=/path")
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


def _build_method(options: dict, input_path: str, stderr: TextIO):
    from benchmarks.greek_sts.corpus import default_corpus_paths, training_corpus
    from detection.methods.greek_registry import get_method

    if options.get("threads"):
        import torch

        torch.set_num_threads(int(options["threads"]))
    try:
        method = get_method(options["method"], **_parse_params(options.get("param")))
    except (KeyError, TypeError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    paths = options.get("corpus") or default_corpus_paths(input_path)
    texts = training_corpus(paths)
    t0 = time.perf_counter()
    method.fit(texts)
    info = {"corpus": [str(p) for p in paths], "n_texts": len(texts), "fit_seconds": time.perf_counter() - t0}
    if not options.get("quiet"):
        stderr.write(f"fitted {method.name} on {len(texts)} texts in {info['fit_seconds']:.1f}s\n")
    return method, info


def _write(path, text: str, stdout: TextIO) -> None:
    if path in (None, "-"):
        stdout.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")


def run_evaluate(options: dict, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> dict | None:
    """``options``: gold, method, param, calibration, corpus, output, plot, threads, quiet."""
    from benchmarks.greek_sts.evaluate import evaluate_method
    from benchmarks.greek_sts.gold import GoldFormatError, read_sts_gold

    if options.get("method") == "list":
        print_methods(stdout)
        return None
    if not options.get("gold") or not options.get("method"):
        raise CommandError("--gold and --method are required (--method list prints the methods)")
    try:
        pairs = read_sts_gold(options["gold"])
    except (GoldFormatError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    method, fit_info = _build_method(options, options["gold"], stderr)
    calibration = None if options.get("calibration") in (None, "none") else options["calibration"]
    t0 = time.perf_counter()
    report = evaluate_method(pairs, method, calibration=calibration, progress=_progress(options.get("quiet"), stderr))
    report["timing"] = {"fit_seconds": fit_info["fit_seconds"], "evaluate_seconds": time.perf_counter() - t0}
    report["training"] = {"corpus": fit_info["corpus"], "n_texts": fit_info["n_texts"]}
    report["gold_file"] = str(options["gold"])
    _write(options.get("output"), json.dumps(report, ensure_ascii=False, indent=2) + "\n", stdout)
    if options.get("plot"):
        from benchmarks.greek_sts.plots import scatter_svg

        preds = report["predictions"]
        Path(options["plot"]).write_text(scatter_svg([p["predicted"] for p in preds], [p["gold"] for p in preds],
                                                     [p["reference_id"] for p in preds],
                                                     title=f"{method.name}: predicted vs gold"), encoding="utf-8")
    if options.get("output") not in (None, "-") and not options.get("quiet"):
        stderr.write(f"{method.name}: RMSE {report['rmse']:.4f}  Spearman {report['spearman']}  "
                     f"Pearson {report['pearson']}  → {options['output']}\n")
    return report


def run_sweep(options: dict, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr):
    """``options``: verses, level, method, param, corpus, output, report_json, plot, threads, quiet."""
    from benchmarks.greek_sts.pilots import PAPER_F1, DEFAULT_THRESHOLDS, read_verses_csv, sweep, write_sweep_csv

    if options.get("method") == "list":
        print_methods(stdout)
        return None
    if not options.get("verses") or not options.get("method"):
        raise CommandError("--verses and --method are required (--method list prints the methods)")
    try:
        verses = read_verses_csv(options["verses"])
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    method, fit_info = _build_method(options, options["verses"], stderr)
    level = options.get("level") or "verse"
    t0 = time.perf_counter()
    result = sweep(verses, level=level, method=method, progress=_progress(options.get("quiet"), stderr))
    seconds = time.perf_counter() - t0
    _write(options.get("output"), write_sweep_csv(result.rows), stdout)
    if options.get("report_json"):
        data = result.to_dict()
        data["timing"] = {"fit_seconds": fit_info["fit_seconds"], "sweep_seconds": seconds}
        data["training"] = {"corpus": fit_info["corpus"], "n_texts": fit_info["n_texts"]}
        Path(options["report_json"]).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if options.get("plot"):
        from benchmarks.greek_sts.plots import threshold_plot_svg

        ref = list(zip(DEFAULT_THRESHOLDS.tolist(), PAPER_F1[level]))
        Path(options["plot"]).write_text(threshold_plot_svg(result.rows, title=f"{method.name}, {level} level",
                                                            reference_f1=ref), encoding="utf-8")
    if not options.get("quiet"):
        b = result.best
        stderr.write(f"{method.name} {level}: best F1 {b.f1:.3f} at {b.threshold:.2f} (P {b.precision:.3f}, "
                     f"R {b.recall:.3f}); {result.n_pairs} pairs, {result.n_positive} positive; {seconds:.1f}s\n")
    return result


def main(argv=None, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.greek_sts.cli", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_evaluate_arguments(sub.add_parser("evaluate", aliases=["evaluate_similarity"], help="score a method on a gold set"))
    add_sweep_arguments(sub.add_parser("sweep", aliases=["pilot_sweep"], help="DBBE verse/type pilot threshold sweep"))
    args = parser.parse_args(argv)
    options = vars(args)
    try:
        if args.command in ("evaluate", "evaluate_similarity"):
            run_evaluate(options, stdout, stderr)
        else:
            run_sweep(options, stdout, stderr)
    except CommandError as exc:
        stderr.write(f"error: {exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
