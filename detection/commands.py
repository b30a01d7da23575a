"""Command-line entry points (no Django needed):

    python -m detection.commands detect --query Q.csv --source S.csv --method bm25-lemma \
        --top-k 100 --output out.csv [--param k1=1.2 --param b=0.75] [--jobs 2]
    python -m detection.commands detect --method list
    python -m detection.commands build_corpus --texts ../shared/data/latin_texts --out data/corpus

``manage.py detect`` and ``manage.py build_corpus`` wrap the same functions. Options follow the project's
command-line convention (:mod:`core.cli`); bad input raises :class:`core.cli.CommandInputError`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from core.cli import CommandInputError, add_method_arguments, method_command, parse_params, user_errors
from core.run_limits import DETECT_JOBS, DETECT_TOP_K, DETECT_UNIT
from detection.latin.errors import InputError
from detection.latin.lemmatize import default_cache_dir
from detection.latin.readers import ReadReport, read_segments_csv

EXPLAIN_DEFAULT = "top-100"  # detect --explain: the rows of each query a reader will look at first


def _progress_printer(stream):
    last = [-1.0]

    def progress(fraction: float, message: str) -> None:
        if fraction - last[0] >= 0.05 or fraction >= 1.0:
            last[0] = fraction
            print(f"[{fraction:6.1%}] {message}", file=stream, flush=True)

    return progress


def run_detect(*, query: str, source: str, output: str, method: str | None = None, top_k: int = 100,
               params: dict | None = None, jobs: int = 1, skip_bad_rows: bool = False, cache_dir=None,
               stream=sys.stderr, reranker: str | None = None, reranker_params: dict | None = None,
               unit: str = "line", explain: str = EXPLAIN_DEFAULT) -> dict:
    """Read the two CSVs, retrieve, write ``query_id,source_id,rank,score``; return a summary dict.

    ``method``: a registered retriever (default :data:`detection.methods.DEFAULT_RETRIEVER`); a ``profile`` it
    declares and is not given follows the unit (``prose`` for sentences, else ``verse``).
    ``unit``: each CSV row is a line; search them as lines, sliding windows of 2-3 lines or sentences
    (:mod:`.units`); ids stay the rows' ids: ``query_id``/``source_id`` are a hit's first lines and, for another
    unit than ``line``, ``query_lines``/``source_lines`` list every line it covers. A method that explains its
    candidates (``channels``) adds an ``explain`` column (JSON) for the rows ``explain`` asks for (:func:`explain_depth`:
    ``none``, ``top-N`` of each query, ``all``), empty on the others. An output ending in ``.json`` is written as
    a JSON list of rows, ``.parquet`` as a Parquet table, anything else as CSV.

    With ``reranker`` (a registered reranker; a supervised one needs a trained ``model`` in its params) the
    top-k are reranked and the rows also get ``retrieval_rank,retrieval_score,p_none,p_cit,p_cf,label``;
    ``rank`` is then the reranked position and ``score`` the log-odds of a reference, log((1 − p_none) / p_none):
    comparable over the whole run and, unlike a probability, never saturated at 1.

    Raises CommandInputError for an unreadable file, an unknown retriever or a bad parameter.
    """
    from detection.latin.units import make_units
    from detection.methods import DEFAULT_RETRIEVER, ParamError, UnknownMethod, params_for_unit, registry

    DETECT_TOP_K.check(top_k, CommandInputError)  # the run limits declared once (core/run_limits.py)
    DETECT_JOBS.check(jobs, CommandInputError)
    DETECT_UNIT.check(unit, CommandInputError)
    n_explain = explain_depth(explain, top_k)
    with user_errors(InputError, ParamError, UnknownMethod):
        spec = registry.get_spec(method or DEFAULT_RETRIEVER)
        if spec.kind != "retriever":
            raise CommandInputError(f"method {spec.name!r} is a {spec.kind}; detect needs a retriever")
        from detection.methods.infrastructure.installed import installed_config

        params = params_for_unit(spec.name, params, unit)
        config, notes = installed_config(registry.configure(spec.name, params), params)
        for note in notes:
            print(note, file=stream)
        queries, qskipped = _read_segments(query, "query", skip_bad_rows, stream)
        sources, sskipped = _read_segments(source, "source", skip_bad_rows, stream)
        context = registry.BuildContext(cache_dir=str(cache_dir or default_cache_dir()), n_jobs=jobs)
        retriever = registry.build_config(config, context)
        rr = _build_reranker(reranker, reranker_params or {}, context) if reranker else None
        if rr is not None:  # a model needing first-stage signals this retriever does not give: refused before work
            from detection.methods.rerank.rerankers import check_first_stage, trained_on_warnings

            check_first_stage(reranker, reranker_params or {}, spec.name, spec.signals)
            for w in trained_on_warnings(reranker_params or {}, spec.name, dict(config.params), unit,
                                         defaults=spec.defaults()):
                print(f"warning: {w}", file=stream)
    progress = _progress_printer(stream)
    qunits = make_units([q.seg_id for q in queries], [q.text for q in queries], unit)
    sunits = make_units([s.seg_id for s in sources], [s.text for s in sources], unit)
    t0 = time.perf_counter()
    with user_errors(ParamError):
        retriever.fit([u.id for u in sunits], [u.text for u in sunits], progress=progress)
    for note in getattr(retriever, "notes", ()):
        print(note, file=stream)
    t1 = time.perf_counter()
    channel_scores = side = signals = None
    with user_errors(ParamError):
        if hasattr(retriever, "search_explained"):  # channel scores: explanations, and the signals a ranker uses
            res, channel_scores, side = retriever.search_explained([u.text for u in qunits], top_k, progress=progress,
                                                                   explain=bool(n_explain) or rr is not None)
            if rr is not None:
                signals = retriever.as_signals(channel_scores, side)
        else:
            res = retriever.search([u.text for u in qunits], top_k, progress=progress)
    t2 = time.perf_counter()
    table = _result_table(res, qunits, sunits, unit)
    if rr is not None:
        table = _reranked_table(table, res, qunits, sunits, rr, signals, getattr(retriever, "signal_names", ()),
                                progress, first_stage=spec.name, stream=stream)
    if n_explain and channel_scores is not None:
        table["explain"] = _explanations(retriever, channel_scores, side, table, qunits, sunits, n_explain)
    n = write_table(Path(output), table)
    t3 = time.perf_counter()
    summary = {"reranker": reranker, "unit": unit, "explain": explain,
        "queries": len(queries), "sources": len(sources), "rows": n, "method": spec.name,
        "params": dict(config.params), "top_k": top_k,
        "fit_s": round(t1 - t0, 2), "search_s": round(t2 - t1, 2), "write_s": round(t3 - t2, 2), "output": str(output),
        "skipped_query_rows": qskipped, "skipped_source_rows": sskipped,
    }
    print(f"wrote {n} rows for {len(queries)} queries x {len(sources)} sources to {output} "
          f"({spec.name}{_profile_note(config)}; fit {summary['fit_s']} s, search {summary['search_s']} s, "
          f"rows and file {summary['write_s']} s)", file=stream)
    return summary



def explain_depth(value: str, top_k: int) -> int:
    """How many of each query's rows ``--explain`` explains: ``none`` 0, ``top-N`` N, ``all`` every one."""
    text = str(value).strip().lower()
    if text == "none":
        return 0
    if text == "all":
        return int(top_k)
    head, _, n = text.partition("-")
    if head == "top" and n.isdigit() and int(n) >= 1:
        return min(int(n), int(top_k))
    raise CommandInputError(f"--explain must be none, top-N (N >= 1, e.g. {EXPLAIN_DEFAULT}) or all, not {value!r}")


def _profile_note(config) -> str:
    profile = dict(config.params).get("profile")
    return f", profile {profile}" if profile else ""


def _result_table(res, qunits, sunits, unit: str) -> dict:
    """The search's rows as columns (every valid (query, rank) in query order): ids, rank, score, the lines a
    unit covers, and the positions (``_q``: query unit, ``_s``: source unit, ``_r``: retrieval rank - 1)
    the explanations and the reranker read."""
    import numpy as np

    idx = np.asarray(res.indices)
    valid = idx >= 0  # a query's results are a prefix of its row (padded with -1)
    counts = valid.sum(axis=1)
    qi = np.repeat(np.arange(idx.shape[0]), counts)
    ri = np.arange(qi.size) - np.repeat(np.cumsum(counts) - counts, counts)
    sj = idx[valid].astype(np.int64)
    table = {"query_id": Coded(qi, [u.id for u in qunits]), "source_id": Coded(sj, [u.id for u in sunits]),
             "rank": (ri + 1).astype(np.int32), "score": np.asarray(res.scores, np.float32)[valid]}
    if unit != "line":
        table["query_lines"] = Coded(qi, [" | ".join(u.lines) for u in qunits])
        table["source_lines"] = Coded(sj, [" | ".join(u.lines) for u in sunits])
    table.update({"_q": qi, "_s": sj, "_r": ri})
    return table


def _explanations(retriever, channel_scores, side, table: dict, qunits, sunits, n: int) -> list:
    """The ``explain`` cell of every row: JSON for rows ranked ``<= n`` (the reranked rank when reranked), None
    (an empty cell) for the others: the text of an explanation is made only for rows that will be read."""
    out = [None] * len(table["rank"])
    for row in (table["rank"] <= n).nonzero()[0].tolist():
        i, j, r = int(table["_q"][row]), int(table["_s"][row]), int(table["_r"][row])
        ex = retriever.explain(i, j, channel_scores[i, r], side)
        ex["query_lines"], ex["source_lines"] = list(qunits[i].lines), list(sunits[j].lines)
        out[row] = json.dumps(ex, ensure_ascii=False, separators=(",", ":"))
    return out


def _build_reranker(name: str, params: dict, context):
    from detection.methods import ParamError, UnknownMethod, registry

    with user_errors(ParamError, UnknownMethod, ValueError):
        spec = registry.get_spec(name)
        if spec.kind != "reranker":
            raise CommandInputError(f"{name!r} is a {spec.kind}, not a reranker")
        if spec.supervised and not params.get("model"):
            raise CommandInputError(f"reranker {name!r} needs a trained model: --reranker-param model=NAME")
        return registry.build_config(registry.configure(name, params, kind="reranker"), context)


def _reranked_table(table: dict, res, qunits, sunits, reranker, signals, names, progress, *, first_stage: str,
                    stream) -> dict:
    """``table`` reranked: rows in (query, reranked rank) order with the retrieval rank and score, the class
    probabilities, the label and the log-odds score (:func:`pipeline.reference_logit`)."""
    import numpy as np

    from detection.methods.rerank import pipeline as P
    from detection.methods.rerank.rerankers import use_warnings
    from detection.methods.rerank.thresholds import CLASSES

    cands = P.from_topk([u.id for u in qunits], [u.text for u in qunits], [u.id for u in sunits],
                        [u.text for u in sunits], res.indices, np.asarray(res.scores, np.float64),
                        {"retriever": first_stage}, signals, tuple(names) if signals is not None else ())
    t = time.perf_counter()
    result = P.rerank(reranker, cands, progress=progress)
    print(f"reranked {len(cands)} candidates with {reranker.name} in {time.perf_counter() - t:.1f} s", file=stream)
    for w in use_warnings(reranker, result):
        print(f"warning: {w}", file=stream)
    # from_topk flattens the same valid (query, rank) cells in the same order as the table
    logit = P.reference_logit(result.probs)
    order = np.lexsort((cands.rank, -logit, cands.qi))
    starts = np.searchsorted(cands.qi[order], np.arange(len(qunits)))
    new_rank = np.empty(len(order), np.int32)
    new_rank[order] = np.arange(len(order)) - starts[cands.qi[order]] + 1
    out = {k: v[order] for k, v in table.items() if k not in ("rank", "score")}
    labels = Coded(np.asarray(result.labels, np.int64), list(CLASSES))
    out.update({"rank": new_rank[order], "score": logit[order], "retrieval_rank": table["rank"][order],
                "retrieval_score": table["score"][order], "p_none": result.probs[order, 0],
                "p_cit": result.probs[order, 1], "p_cf": result.probs[order, 2], "label": labels[order]})
    return out


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


COLUMN_ORDER = ("query_id", "source_id", "rank", "score", "retrieval_rank", "retrieval_score", "p_none", "p_cit",
                "p_cf", "label", "query_lines", "source_lines", "explain")


def write_table(out: Path, table: dict) -> int:
    """Write a result table's public columns (:data:`COLUMN_ORDER`; those starting with ``_`` are positions) in
    bulk, scores as the search gave them (float32: its shortest exact decimal): CSV (Arrow's writer), Parquet
    for ``.parquet``, a JSON list of row objects
    for ``.json`` (``explain`` parsed, lines as lists). Returns the number of rows."""
    import pyarrow as pa

    cols = [c for c in COLUMN_ORDER if c in table]
    n = len(table["rank"])
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".json":
        with open(out, "w", encoding="utf-8") as fh:
            fh.write("[")
            for i in range(n):
                row = {c: _json_cell(c, table[c][i]) for c in cols}
                fh.write(("," if i else "") + "\n" + json.dumps(row, ensure_ascii=False))
            fh.write("\n]\n")
        return n
    arrays = {c: table[c].arrow() if isinstance(table[c], Coded) else pa.array(table[c], type=(
        pa.string() if c == "explain" else None)) for c in cols}
    tbl = pa.table(arrays) if cols else pa.table({})
    if out.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        pq.write_table(tbl, out)
    else:
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv

        # strings are quoted only when one of them holds a comma, a quote or a line break (the header never)
        special = re.compile(r'[,"\r\n]')
        quote = any(any(map(special.search, table[c].values)) if isinstance(table[c], Coded) else
                    pa.types.is_string(arrays[c].type)
                    and pc.any(pc.match_substring_regex(arrays[c], special.pattern)).as_py() for c in cols)
        with open(out, "wb") as fh:
            fh.write((",".join(cols) + "\n").encode())
            pcsv.write_csv(tbl, fh, pcsv.WriteOptions(include_header=False,
                                                      quoting_style="needed" if quote else "none"))
    return n


class Coded:
    """A text column as codes into its distinct values (a query's id repeats on each of its rows): indexed like an
    array, written as an Arrow dictionary column (no Python string per row)."""

    def __init__(self, codes, values):
        import numpy as np

        self.codes, self.values = np.asarray(codes, np.int64), list(values)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i):
        if hasattr(i, "__len__") or isinstance(i, slice):
            return Coded(self.codes[i], self.values)
        return self.values[int(self.codes[i])]

    def arrow(self):
        import pyarrow as pa

        return pa.DictionaryArray.from_arrays(pa.array(self.codes.astype("int32")), pa.array(self.values, pa.string()))


def _json_cell(col: str, value):
    if col == "explain":
        return json.loads(value) if value else None
    if col in ("query_lines", "source_lines"):
        return value.split(" | ")
    return value.item() if hasattr(value, "item") else value


def run_build_corpus(*, texts: str, out: str, stream=sys.stdout) -> dict:
    from detection.latin.loci_corpus import build_corpus, format_table1

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
    from detection.methods import DEFAULT_RETRIEVER, registry

    add_method_arguments(p, default=DEFAULT_RETRIEVER, what="retriever")
    p.epilog = (f"default retriever: {DEFAULT_RETRIEVER} (profile verse for lines and windows, prose for sentences; "
                f"--param profile=... overrides); retrievers: {', '.join(registry.names(kind='retriever', language='la'))}"
                f"; rerankers: {', '.join(registry.names(kind='reranker', language='la'))}")
    DETECT_TOP_K.add_option(p, "--top-k")
    DETECT_UNIT.add_option(p, "--unit")
    p.add_argument("--output", help="output file: CSV (query_id,source_id,rank,score, then the reranker's and the "
                   "explanation's columns); a name ending in .json is written as JSON, .parquet as Parquet")
    DETECT_JOBS.add_option(p, "--jobs")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip (and count) bad rows instead of stopping at the first")
    p.add_argument("--cache-dir", default=None, help="lemma cache directory (default ~/.cache/similia/lemmas)")
    p.add_argument("--explain", default=EXPLAIN_DEFAULT,
                   help=f"explain none, the top-N rows of each query or all of them (default {EXPLAIN_DEFAULT})")
    p.add_argument("--reranker", default=None, help="rerank the top-k with a registered reranker ("
                   f"{', '.join(registry.names(kind='reranker', language='la'))})")
    p.add_argument("--reranker-param", action="append", default=[],
                   help="reranker parameter KEY=VALUE (repeatable), e.g. model=NAME/all")


def add_build_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--texts", default=os.environ.get("SIMILIA_LATIN_TEXTS", "../shared/data/latin_texts"))
    p.add_argument("--out", default="data/corpus")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m detection.commands")
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
                      reranker_params=parse_params(options.get("reranker_param")), unit=options.get("unit") or "line",
                      explain=options.get("explain") or EXPLAIN_DEFAULT)


if __name__ == "__main__":
    raise SystemExit(main())
