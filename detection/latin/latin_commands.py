"""Command-line entry points (no Django needed):

    python -m detection.latin.latin_commands detect --query Q.csv --source S.csv --method bm25-lemma \
        --top-k 100 --output out.csv [--param k1=1.2 --param b=0.75] [--jobs 2]
    python -m detection.latin.latin_commands detect --method list
    python -m detection.latin.latin_commands build_corpus --texts ../shared/data/latin_texts --out data/corpus

``manage.py detect`` and ``manage.py build_corpus`` wrap the same functions. Options follow the project's
command-line convention (:mod:`core.cli`); bad input raises :class:`core.cli.CommandInputError`.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

from core.cli import CommandInputError, add_method_arguments, method_command, parse_params, user_errors
from core.run_limits import DETECT_JOBS, DETECT_TOP_K, DETECT_UNIT

from .errors import InputError
from .lemmatize import default_cache_dir
from .readers import ReadReport, read_segments_csv


def _progress_printer(stream):
    last = [-1.0]

    def progress(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.05 or fraction >= 1.0:
            last[0] = fraction
            print(f"[{fraction:6.1%}] {message}", file=stream, flush=True)

    return progress


def run_detect(*, query: str, source: str, output: str, method: str = "bm25-lemma", top_k: int = 100,
               params: dict | None = None, jobs: int = 1, skip_bad_rows: bool = False, cache_dir=None,
               stream=sys.stderr, reranker: str | None = None, reranker_params: dict | None = None,
               unit: str = "line") -> dict:
    """Read the two CSVs, retrieve, write ``query_id,source_id,rank,score``; return a summary dict.

    ``unit``: each CSV row is a line; search them as lines, sliding windows of 2-3 lines or sentences
    (:mod:`.units`); ids stay the rows' ids: ``query_id``/``source_id`` are a hit's first lines and, for another
    unit than ``line``, ``query_lines``/``source_lines`` list every line it covers. A method that explains its
    candidates (``channels``) adds an ``explain`` column (JSON); an output ending in ``.json`` is written as a
    JSON list of rows.

    With ``reranker`` (a registered reranker; a supervised one needs a trained ``model`` in its params) the
    top-k are reranked and the rows also get ``retrieval_rank,retrieval_score,p_none,p_cit,p_cf,label``;
    ``rank``/``score`` are then the reranked position and 1 − p_none.

    Raises CommandInputError for an unreadable file, an unknown retriever or a bad parameter.
    """
    from detection.methods import ParamError, UnknownMethod, registry

    from .units import make_units

    DETECT_TOP_K.check(top_k, CommandInputError)  # the run limits declared once (core/run_limits.py)
    DETECT_JOBS.check(jobs, CommandInputError)
    DETECT_UNIT.check(unit, CommandInputError)
    with user_errors(InputError, ParamError, UnknownMethod):
        spec = registry.get_spec(method)
        if spec.kind != "retriever":
            raise CommandInputError(f"method {spec.name!r} is a {spec.kind}; detect needs a retriever")
        from detection.methods.infrastructure.installed import installed_config

        config, notes = installed_config(registry.configure(spec.name, params or {}), params)
        for note in notes:
            print(note, file=stream)
        queries, qskipped = _read_segments(query, "query", skip_bad_rows, stream)
        sources, sskipped = _read_segments(source, "source", skip_bad_rows, stream)
        context = registry.BuildContext(cache_dir=str(cache_dir or default_cache_dir()), n_jobs=jobs)
        retriever = registry.build_config(config, context)
        rr = _build_reranker(reranker, reranker_params or {}, context) if reranker else None
        if rr is not None:  # a model needing first-stage signals this retriever does not give: refused before work
            from detection.methods.rerank.rerankers import check_first_stage

            check_first_stage(reranker, reranker_params or {}, spec.name, spec.signals)
    progress = _progress_printer(stream)
    qunits = make_units([q.seg_id for q in queries], [q.text for q in queries], unit)
    sunits = make_units([s.seg_id for s in sources], [s.text for s in sources], unit)
    t0 = time.perf_counter()
    with user_errors(ParamError):
        retriever.fit([u.id for u in sunits], [u.text for u in sunits], progress=progress)
    for note in getattr(retriever, "notes", ()):
        print(note, file=stream)
    t1 = time.perf_counter()
    explained = None
    with user_errors(ParamError):
        if rr is not None:  # the top k with the first stage's own signals (channels'), which a ranker may use
            from detection.methods.rerank.pipeline import search_with_signals

            res = search_with_signals(retriever, [u.text for u in qunits], top_k, progress=progress)
        elif hasattr(retriever, "search_explained"):
            res, channel_scores, side = retriever.search_explained([u.text for u in qunits], top_k, progress=progress)
            explained = (retriever, channel_scores, side)
        else:
            res = retriever.search([u.text for u in qunits], top_k, progress=progress)
    t2 = time.perf_counter()
    if rr is not None:
        queries = [type(q)(seg_id=u.id, text=u.text) for q, u in zip(queries, qunits)] if unit != "line" else queries
        sources = [type(s)(seg_id=u.id, text=u.text) for s, u in zip(sources, sunits)] if unit != "line" else sources
        n = _write_reranked(Path(output), queries, sources, res, rr, progress, first_stage=spec.name, stream=stream)
    else:
        n = _write_rankings(Path(output), _unit_rows(res, qunits, sunits, unit, explained))
    summary = {"reranker": reranker, "unit": unit,
        "queries": len(queries), "sources": len(sources), "rows": n, "method": spec.name, "top_k": top_k,
        "fit_s": round(t1 - t0, 2), "search_s": round(t2 - t1, 2), "output": str(output),
        "skipped_query_rows": qskipped, "skipped_source_rows": sskipped,
    }
    print(f"wrote {n} rows for {len(queries)} queries x {len(sources)} sources to {output} "
          f"(fit {summary['fit_s']} s, search {summary['search_s']} s)", file=stream)
    return summary


def _build_reranker(name: str, params: dict, context):
    from detection.methods import ParamError, UnknownMethod, registry

    with user_errors(ParamError, UnknownMethod, ValueError):
        spec = registry.get_spec(name)
        if spec.kind != "reranker":
            raise CommandInputError(f"{name!r} is a {spec.kind}, not a reranker")
        if spec.supervised and not params.get("model"):
            raise CommandInputError(f"reranker {name!r} needs a trained model: --reranker-param model=NAME")
        return registry.build_config(registry.configure(name, params, kind="reranker"), context)


def _write_reranked(out: Path, queries, sources, res, reranker, progress, *, first_stage: str, stream) -> int:
    """``res``: ``pipeline.search_with_signals``' (indices, scores, signals, their names)."""
    from detection.methods.rerank import pipeline as P
    from detection.methods.rerank.rerankers import use_warnings

    indices, scores, signals, names = res
    cands = P.from_topk([q.seg_id for q in queries], [q.text for q in queries], [s.seg_id for s in sources],
                        [s.text for s in sources], indices, scores, {"retriever": first_stage}, signals, names)
    t = time.perf_counter()
    result = P.rerank(reranker, cands, progress=progress)
    print(f"reranked {len(cands)} candidates with {reranker.name} in {time.perf_counter() - t:.1f} s", file=stream)
    for w in use_warnings(reranker, result):
        print(f"warning: {w}", file=stream)
    rows = P.rows(result)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "source_id", "rank", "score", "retrieval_rank", "retrieval_score", "p_none",
                    "p_cit", "p_cf", "label"])
        for r in rows:
            w.writerow([r["query_id"], r["source_id"], r["rerank_rank"], f"{1 - r['p_none']:.6g}",
                        r["retrieval_rank"], f"{r['retrieval_score']:.6g}", f"{r['p_none']:.6g}",
                        f"{r['p_cit']:.6g}", f"{r['p_cf']:.6g}", r["label"]])
    return len(rows)


def _read_segments(path, side: str, skip_bad_rows: bool, stream):
    """(segments, rows skipped) of a ``seg_id,text`` CSV; bad rows stop the read unless ``skip_bad_rows``."""
    report = ReadReport() if skip_bad_rows else None
    segments = read_segments_csv(path, report=report)
    if report is not None and report.total_skipped:
        print(f"{path}: {report.summary()}", file=stream)
        for message in report.messages[:10]:
            print(f"  {message}", file=stream)
    if not segments:
        raise InputError(f"no {side} segments", path=path)
    return segments, report.total_skipped if report else 0


def _unit_rows(res, qunits, sunits, unit: str, explained):
    """Row dicts of a search over units: ids of the first lines, the lines covered, the explanation."""
    for i, qu in enumerate(qunits):
        for r, (j, score) in enumerate(zip(res.indices[i], res.scores[i]), 1):
            if j < 0:
                break
            su = sunits[j]
            row = {"query_id": qu.id, "source_id": su.id, "rank": r, "score": float(score)}
            if unit != "line":
                row["query_lines"], row["source_lines"] = list(qu.lines), list(su.lines)
            if explained is not None:
                retriever, channel_scores, side = explained
                ex = retriever.explain(i, int(j), channel_scores[i, r - 1], side)
                ex["query_lines"], ex["source_lines"] = list(qu.lines), list(su.lines)
                row["explain"] = ex
            yield row


def _write_rankings(out: Path, rows) -> int:
    """``query_id,source_id,rank,score`` (+ ``query_lines,source_lines``, ``explain`` when the rows have them) as
    CSV, or a JSON list when ``out`` ends in ``.json``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    if out.suffix.lower() == ".json":
        with open(out, "w", encoding="utf-8") as fh:
            fh.write("[")
            for row in rows:
                fh.write(("," if n else "") + "\n" + json.dumps(row, ensure_ascii=False))
                n += 1
            fh.write("\n]\n")
        return n
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        header = None
        for row in rows:
            if header is None:
                header = ["query_id", "source_id", "rank", "score"] + [
                    c for c in ("query_lines", "source_lines", "explain") if c in row]
                w.writerow(header)
            cells = []
            for c in header:
                v = row[c]
                if c == "score":
                    v = f"{v:.6g}"
                elif c in ("query_lines", "source_lines"):
                    v = " | ".join(v)
                elif c == "explain":
                    v = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
                cells.append(v)
            w.writerow(cells)
            n += 1
        if header is None:
            w.writerow(["query_id", "source_id", "rank", "score"])
    return n


def run_build_corpus(*, texts: str, out: str, stream=sys.stdout) -> dict:
    from .loci_corpus import build_corpus, format_table1

    with user_errors(InputError):
        stats = build_corpus(texts, out, progress=_progress_printer(sys.stderr))
    print(format_table1(stats), file=stream)
    for m in stats.messages[:20]:
        print(f"  skipped: {m}", file=stream)
    print(f"wrote {stats.query_path} and {stats.source_path}", file=stream)
    return {"query": stats.query_path, "source": stats.source_path, "skipped": stats.skipped}


def add_detect_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--query", help="query CSV (seg_id,text)")
    p.add_argument("--source", help="source CSV (seg_id,text)")
    add_method_arguments(p, default="bm25-lemma", what="retriever")
    DETECT_TOP_K.add_option(p, "--top-k")
    DETECT_UNIT.add_option(p, "--unit")
    p.add_argument("--output", help="output CSV (query_id,source_id,rank,score)")
    DETECT_JOBS.add_option(p, "--jobs")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip (and count) bad rows instead of stopping at the first")
    p.add_argument("--cache-dir", default=None, help="lemma cache directory (default ~/.cache/similia/lemmas)")
    p.add_argument("--reranker", default=None, help="rerank the top-k with a registered reranker (feature-logreg, "
                   "feature-hgb, lexical-rule, cross-encoder)")
    p.add_argument("--reranker-param", action="append", default=[],
                   help="reranker parameter KEY=VALUE (repeatable), e.g. model=NAME/all")


def add_build_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--texts", default=os.environ.get("SIMILIA_LATIN_TEXTS", "../shared/data/latin_texts"))
    p.add_argument("--out", default="data/corpus")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m detection.latin.latin_commands")
    sub = parser.add_subparsers(dest="command", required=True)
    add_detect_arguments(sub.add_parser("detect", help="retrieve top-k sources for every query"))
    add_build_corpus_arguments(sub.add_parser("build_corpus", help="build query/source corpora"))
    args = vars(parser.parse_args(argv))
    command = args.pop("command")
    try:
        if command == "detect":
            detect_command(args, stdout=sys.stdout, stderr=sys.stderr)
        else:
            run_build_corpus(**args)
    except CommandInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _listing(registry) -> str:
    """``detect --method list``: the retrievers, the rerankers and the stored reranker models."""
    from detection.methods.rerank.rerankers import format_stored_rerankers

    return (registry.format_specs(kind="retriever", language="la") + "\n"
            + registry.format_specs(kind="reranker", language="la") + "\n" + format_stored_rerankers())


def detect_command(options: dict, *, stdout, stderr) -> dict | None:
    """``detect`` from parsed options (shared by ``python -m`` and ``manage.py detect``)."""
    from detection.methods import registry

    if not method_command(options, required=("query", "source", "output"), stdout=stdout,
                          listing=lambda: _listing(registry)):
        return None
    return run_detect(query=options["query"], source=options["source"], output=options["output"],
                      method=options["method"], top_k=options["top_k"], params=parse_params(options["param"]),
                      jobs=options["jobs"], skip_bad_rows=options["skip_bad_rows"], cache_dir=options["cache_dir"],
                      stream=stderr, reranker=options.get("reranker"),
                      reranker_params=parse_params(options.get("reranker_param")), unit=options.get("unit") or "line")


if __name__ == "__main__":
    raise SystemExit(main())
