"""Command-line entry points (no Django needed):

    python -m detection.latin.cli detect --query Q.csv --source S.csv --retriever bm25-lemma \
        --top-k 100 --output out.csv [--param k1=1.2 --param b=0.75] [--jobs 2]
    python -m detection.latin.cli build_corpus --texts ../shared/data/latin_texts --out data/corpus

``manage.py detect`` and ``manage.py build_corpus`` wrap the same functions.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

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


def _parse_params(items) -> dict:
    params = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--param expects name=value, got {item!r}")
        key, value = item.split("=", 1)
        for cast in (int, float):
            try:
                value = cast(value)
                break
            except ValueError:
                continue
        params[key.strip()] = value
    return params


def run_detect(query: str, source: str, output: str, retriever: str = "bm25-lemma", top_k: int = 100,
               params: dict | None = None, jobs: int = 1, skip_bad: bool = False, cache_dir=None,
               stream=sys.stderr, reranker: str | None = None, reranker_params: dict | None = None) -> dict:
    """Read the two CSVs, retrieve, write ``query_id,source_id,rank,score``; return a summary dict.

    With ``reranker`` (a registered reranker; a supervised one needs a trained ``model`` in its params) the
    top-k are reranked and the rows get ``retrieval_rank,retrieval_score,p_none,p_cit,p_cf,label`` as well,
    ``rank``/``score`` then being the reranked position and 1 − p_none.
    """
    from detection.methods import get_retriever

    progress = _progress_printer(stream)
    qrep = ReadReport() if skip_bad else None
    srep = ReadReport() if skip_bad else None
    queries = read_segments_csv(query, report=qrep)
    sources = read_segments_csv(source, report=srep)
    for label, rep, path in (("query", qrep, query), ("source", srep, source)):
        if rep is not None and rep.total_skipped:
            print(f"{path}: {rep.summary()}", file=stream)
            for m in rep.messages[:10]:
                print(f"  {m}", file=stream)
    if not queries:
        raise InputError("no query segments", path=query)
    if not sources:
        raise InputError("no source segments", path=source)
    params = dict(params or {})
    params.setdefault("cache_dir", str(cache_dir or default_cache_dir()))
    if retriever.startswith(("bm25", "tfidf")):
        params.setdefault("n_jobs", jobs)
    t0 = time.perf_counter()
    r = get_retriever(retriever, **params)
    r.fit([s.seg_id for s in sources], [s.text for s in sources], progress=progress)
    t1 = time.perf_counter()
    res = r.search([q.text for q in queries], top_k, progress=progress)
    t2 = time.perf_counter()
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if reranker:
        n = _write_reranked(out, queries, sources, res, reranker, reranker_params or {}, params["cache_dir"],
                            progress)
        print(f"wrote {n} reranked rows ({reranker}) for {len(queries)} queries to {out}", file=stream)
        return {"queries": len(queries), "sources": len(sources), "rows": n, "retriever": retriever,
                "reranker": reranker, "top_k": top_k, "output": str(out)}
    n = 0
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["query_id", "source_id", "rank", "score"])
        for qid, sid, rank, score in res.iter_rows([q.seg_id for q in queries]):
            w.writerow([qid, sid, rank, f"{score:.6g}"])
            n += 1
    summary = {
        "queries": len(queries), "sources": len(sources), "rows": n, "retriever": retriever, "top_k": top_k,
        "fit_s": round(t1 - t0, 2), "search_s": round(t2 - t1, 2), "output": str(out),
        "skipped_query_rows": qrep.total_skipped if qrep else 0,
        "skipped_source_rows": srep.total_skipped if srep else 0,
    }
    print(f"wrote {n} rows for {len(queries)} queries x {len(sources)} sources to {out} "
          f"(fit {summary['fit_s']} s, search {summary['search_s']} s)", file=stream)
    return summary


def _write_reranked(out: Path, queries, sources, res, reranker: str, reranker_params: dict, cache_dir,
                    progress) -> int:
    from detection.methods import registry
    from detection.methods.rerank import pipeline as P

    try:
        spec = registry.get_spec(reranker)
        if spec.kind != "reranker":
            raise InputError(f"{reranker!r} is a {spec.kind}, not a reranker")
        if spec.supervised and not reranker_params.get("model"):
            raise InputError(f"reranker {reranker!r} needs a trained model: --reranker-param model=NAME")
        internal = {"cache_dir": cache_dir} if "cache_dir" in spec.internal else {}
        rr = spec.build(reranker_params, **internal)
    except (registry.ParamError, registry.UnknownMethod, ValueError) as exc:
        raise InputError(str(exc)) from None
    cands = P.from_topk([q.seg_id for q in queries], [q.text for q in queries], [s.seg_id for s in sources],
                        [s.text for s in sources], res.indices, res.scores)
    rows = P.rows(P.rerank(rr, cands, progress=progress))
    header = ["query_id", "source_id", "rank", "score", "retrieval_rank", "retrieval_score", "p_none", "p_cit",
              "p_cf", "label"]
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow([r["query_id"], r["source_id"], r["rerank_rank"], f"{1 - r['p_none']:.6g}", r["retrieval_rank"],
                        f"{r['retrieval_score']:.6g}", f"{r['p_none']:.6g}", f"{r['p_cit']:.6g}", f"{r['p_cf']:.6g}",
                        r["label"]])
    return len(rows)


def run_build_corpus(texts: str, out: str, stream=sys.stdout) -> dict:
    from .corpus import build_corpus, format_table1

    stats = build_corpus(texts, out, progress=_progress_printer(sys.stderr))
    print(format_table1(stats), file=stream)
    for m in stats.messages[:20]:
        print(f"  skipped: {m}", file=stream)
    print(f"wrote {stats.query_path} and {stats.source_path}", file=stream)
    return {"query": stats.query_path, "source": stats.source_path, "skipped": stats.skipped}


def add_detect_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--query", required=True, help="query CSV (seg_id,text)")
    p.add_argument("--source", required=True, help="source CSV (seg_id,text)")
    p.add_argument("--retriever", default="bm25-lemma")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--output", required=True, help="output CSV (query_id,source_id,rank,score)")
    p.add_argument("--param", action="append", default=[], help="retriever parameter name=value (repeatable)")
    p.add_argument("--reranker", default=None, help="rerank the top-k with a registered reranker (feature-logreg, "
                   "feature-hgb, lexical-rule, cross-encoder)")
    p.add_argument("--reranker-param", action="append", default=[],
                   help="reranker parameter name=value (repeatable), e.g. model=NAME")
    p.add_argument("--jobs", type=int, default=1, help="processes for sparse retrievers")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip (and count) bad rows instead of stopping at the first")
    p.add_argument("--cache-dir", default=None, help="lemma cache directory (default ~/.cache/similia/lemmas)")


def add_build_corpus_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--texts", default=os.environ.get("SIMILIA_LATIN_TEXTS", "../shared/data/latin_texts"))
    p.add_argument("--out", default="data/corpus")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m detection.latin.cli")
    sub = parser.add_subparsers(dest="command", required=True)
    add_detect_arguments(sub.add_parser("detect", help="retrieve top-k sources for every query"))
    add_build_corpus_arguments(sub.add_parser("build_corpus", help="build query/source corpora"))
    args = parser.parse_args(argv)
    try:
        if args.command == "detect":
            run_detect(args.query, args.source, args.output, args.retriever, args.top_k,
                       _parse_params(args.param), args.jobs, args.skip_bad_rows, args.cache_dir,
                       reranker=args.reranker, reranker_params=_parse_params(args.reranker_param))
        else:
            run_build_corpus(args.texts, args.out)
    except (InputError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
