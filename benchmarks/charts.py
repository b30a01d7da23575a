"""Page context for run pages: SVG plots (from the pure plot helpers) and tables in the paper's shapes."""
from __future__ import annotations

from django.utils.safestring import mark_safe

from benchmarks.models import EvaluationRun, PilotRun, SimilarityRun


def _ms(entry):
    """(mean, std) of a metrics entry, or None."""
    if not entry or entry.get("mean") is None:
        return None
    return entry["mean"], entry.get("std")


def loci_run_context(run: EvaluationRun) -> dict:
    from benchmarks.loci import plots
    from benchmarks.loci import report as R

    rep = run.report
    ks = rep.get("ks") or run.ks
    metrics = rep.get("metrics", {})
    ctx: dict = {"ks": ks}
    try:
        ctx["recall_svg"] = mark_safe(plots.recall_curve_svg([rep], views=("all", "cit.", "cf."),
                                                             title="Recall@k (mean ± 1 std over folds)"))
        ctx["mrr_svg"] = mark_safe(plots.recall_curve_svg([rep], views=("all",), metric="mrr", title="MRR@k"))
    except (KeyError, TypeError, ValueError):
        ctx["recall_svg"] = None
    # Table 7/8 shape: pooled Recall@k and MRR@k, mean ± std over folds; Table 2 shape: per type.
    ctx["table8"] = [(name, [(k, _ms(metrics.get("all", {}).get(f"{name}@{k}"))) for k in ks])
                     for name in ("recall", "mrr")]
    ctx["table2"] = [(view, metrics.get(view, {}).get("n_queries"),
                      [(k, _ms(metrics.get(view, {}).get(f"recall@{k}"))) for k in ks]) for view in ("cit.", "cf.")]
    paper = R.PAPER_TABLE8.get(run.method)
    ctx["paper_table8"] = dict(zip(["recall@10", "recall@100", "recall@1000", "mrr@10", "mrr@100", "mrr@1000"],
                                   paper)) if paper else None
    ctx["folds"] = [(f.get("fold"), f.get("n_queries"), f.get("n_gold"),
                     [f.get("metrics", {}).get("all", {}).get(f"recall@{k}") for k in ks]) for f in run.per_fold]
    pairwise = rep.get("pairwise") or {}
    if pairwise.get("sweep"):
        try:
            ctx["prf_svg"] = mark_safe(plots.prf_vs_k_svg(_thin_sweep(pairwise, "all"), "all"))
        except (KeyError, TypeError, ValueError, IndexError):
            ctx["prf_svg"] = None
        ctx["table12"] = _collapse_same_rows(R.table12_rows(pairwise, "all"))
        ctx["table4"] = pairwise.get("table4")
    classification = pairwise.get("classification")
    if classification:
        ctx["classification"] = [
            (view, {agg: {m: _ms(block["mean"][agg][m]) for m in ("p", "r", "f1")}
                    for agg in ("macro_gold", "pooled")})
            for view, block in classification.items()]
        ctx["error_rates"] = (pairwise.get("error_rates") or {}).get("mean")
    rerank = rep.get("rerank")
    if rerank:
        rks = [k for k in ks if f"mrr@{k}" in rerank.get("rerank", {})]
        ctx["rerank_ks"] = rks
        ctx["rerank_table"] = [
            (f"{stage} {name}", [_ms(rerank[key]["metrics"].get(view, {}).get(f"{name}@{k}")) for k in rks])
            for view in ("all", "cit.", "cf.") for name in ("mrr", "recall")
            for stage, key in ((f"{view} first stage", "retrieval"), (f"{view} + rerank", "rerank"))]
        ctx["rerank_classes"] = [(view, {m: _ms(block["mean"][m]) for m in ("p", "r", "f1")})
                                 for view, block in rerank.get("classification", {}).items()]
        ctx["rerank_sweep"] = [{"k": r["k"], **{stage: {m: _ms(v) for m, v in r.get(stage, {}).items()}
                                                    for stage in ("ret", "rer")}}
                               for r in rerank.get("sweep", {}).get("all", [])]
        ctx["rerank_folds"] = rerank.get("folds", [])
    ctx["worst_queries"] = sorted(
        (row for row in run.per_query if row.get("rr") is not None), key=lambda row: row["rr"])[:20]
    return ctx


def _thin_sweep(pairwise: dict, view: str, ratio: float = 2.0) -> dict:
    """The sweep with the chart's k values at least `ratio` apart (and the last kept): on a log axis the ticks
    200, 300, … 1000 printed over each other. The table below the chart keeps every k."""
    rows = pairwise["sweep"][view]
    kept: list[dict] = []
    for row in rows:
        if not kept or row["k"] >= ratio * kept[-1]["k"]:
            kept.append(row)
    if rows and kept[-1] is not rows[-1]:
        if len(kept) > 1 and rows[-1]["k"] < ratio * kept[-1]["k"]:
            kept.pop()
        kept.append(rows[-1])
    return {**pairwise, "sweep": {**pairwise["sweep"], view: kept}}


def _collapse_same_rows(rows: list[dict]) -> list[dict]:
    """Rows for k beyond the pool's depth repeat the last one: keep one row with `k_to`, the last k it covers."""
    out: list[dict] = []
    for row in rows:
        same = out and {k: v for k, v in row.items() if k != "k"} == {
            k: v for k, v in out[-1].items() if k not in ("k", "k_to")}
        if same:
            out[-1]["k_to"] = row["k"]
        else:
            out.append(dict(row))
    return out


def similarity_run_context(run: SimilarityRun) -> dict:
    from benchmarks.greek_sts import plots

    rep = run.report
    by_ref: dict[str, list[dict]] = {}
    for row in rep.get("predictions", []):
        by_ref.setdefault(row["reference_id"], []).append(row)
    scatters = [(ref, mark_safe(plots.scatter_svg([r["predicted"] for r in rows], [r["gold"] for r in rows],
                                                  title=f"Reference {ref}: predicted vs gold")))
                for ref, rows in by_ref.items()]
    all_rows = rep.get("predictions", [])
    overall = mark_safe(plots.scatter_svg([r["predicted"] for r in all_rows], [r["gold"] for r in all_rows],
                                          groups=[r["reference_id"] for r in all_rows],
                                          title="All pairs, coloured by reference"))
    return {"scatters": scatters, "overall_scatter": overall,
            "per_reference": sorted((rep.get("per_reference") or {}).items()),
            "directionality": rep.get("directionality") or {}}


def pilot_svg(run: PilotRun) -> str:
    from benchmarks.greek_sts import pilots, plots

    paper = pilots.PAPER_F1.get(run.level)
    reference = list(zip([float(t) for t in pilots.DEFAULT_THRESHOLDS], paper)) if paper else None
    # no title inside the chart: the page's heading names it, and a drawn title collided with the best-F1 label
    return plots.threshold_plot_svg(run.rows, title="", reference_f1=reference)
