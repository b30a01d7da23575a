"""Report builders: tables in the paper's shapes (Tables 2, 4, 8, 12, 5), CSV exports and Markdown."""
from __future__ import annotations

from core.csv_export import csv_text

# The paper's lexical rows (arXiv 2601.07533 v2), for side-by-side display.
PAPER_TABLE2 = {  # Recall x100 at 10/100/1000, verbatim (cit.) then allusion (cf.)
    "tfidf-surface": (60.63, 75.39, 87.55, 8.52, 23.59, 50.97),
    "tfidf-lemma": (55.47, 72.28, 90.09, 8.14, 20.79, 56.61),
    "tfidf-lemma-12": (58.19, 74.03, 90.78, 7.90, 25.70, 60.74),
    "bm25-surface": (67.70, 75.64, 87.01, 12.22, 28.40, 50.29),
    "bm25-lemma": (63.97, 77.62, 90.08, 11.96, 29.43, 57.92),
}
PAPER_TABLE8 = {  # pooled Recall@10/100/1000, MRR@10/100/1000 (means; stds in the paper)
    "tfidf-surface": (0.516, 0.652, 0.804, 0.439, 0.446, 0.446),
    "tfidf-lemma": (0.475, 0.623, 0.821, 0.431, 0.438, 0.439),
    "tfidf-lemma-12": (0.494, 0.645, 0.833, 0.419, 0.426, 0.426),
    "bm25-surface": (0.572, 0.666, 0.799, 0.556, 0.560, 0.561),
    "bm25-lemma": (0.545, 0.680, 0.824, 0.514, 0.521, 0.522),
}
PAPER_LABELS = {"tfidf-surface": "TF-IDF (surf. 1g)", "tfidf-lemma": "TF-IDF (lem. 1g)",
                "tfidf-lemma-12": "TF-IDF (lem. 1+2g)", "bm25-surface": "BM25 (surf. 1g)",
                "bm25-lemma": "BM25 (lem. 1g)"}


def _ms(d):
    if not d or d.get("mean") is None:
        return None
    return d["mean"], d.get("std")


def table2_row(rep: dict, ks=(10, 100, 1000)) -> dict:
    """Recall@k x100 for ``cit.`` and ``cf.`` (Table 2 shape)."""
    m = rep["metrics"]
    out = {"method": rep["method"]["name"]}
    for v in ("cit.", "cf."):
        for k in ks:
            x = _ms(m[v].get(f"recall@{k}"))
            out[f"{v} R@{k}"] = None if x is None else 100 * x[0]
    return out


def table8_row(rep: dict, ks=(10, 100, 1000)) -> dict:
    """Pooled Recall@k and MRR@k, mean ± std over folds (Table 7/8 shape)."""
    m = rep["metrics"]["all"]
    out = {"method": rep["method"]["name"]}
    for name in ("recall", "mrr"):
        for k in ks:
            out[f"{name}@{k}"] = _ms(m.get(f"{name}@{k}"))
    return out


def fmt_ms(x, digits=3):
    if x is None:
        return "–"
    mean, std = x
    return f"{mean:.{digits}f} ± {std:.{digits}f}" if std is not None else f"{mean:.{digits}f}"


def markdown_table(headers, rows) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join("–" if c is None else str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def table8_markdown(reports: list[dict], with_paper: bool = True) -> str:
    rows = []
    for rep in reports:
        r = table8_row(rep)
        name = rep["method"]["name"]
        rows.append([name + " (ours)"] + [fmt_ms(r[f"{n}@{k}"]) for n in ("recall", "mrr") for k in (10, 100, 1000)])
        if with_paper and name in PAPER_TABLE8:
            rows.append([PAPER_LABELS[name] + " (paper)"] + [f"{x:.3f}" for x in PAPER_TABLE8[name]])
    return markdown_table(["method", "R@10", "R@100", "R@1000", "MRR@10", "MRR@100", "MRR@1000"], rows)


def table2_markdown(reports: list[dict], with_paper: bool = True) -> str:
    rows = []
    for rep in reports:
        r = table2_row(rep)
        name = rep["method"]["name"]
        rows.append([name + " (ours)"] + [("–" if r[f"{v} R@{k}"] is None else f"{r[f'{v} R@{k}']:.2f}")
                                          for v in ("cit.", "cf.") for k in (10, 100, 1000)])
        if with_paper and name in PAPER_TABLE2:
            rows.append([PAPER_LABELS[name] + " (paper)"] + [f"{x:.2f}" for x in PAPER_TABLE2[name]])
    return markdown_table(["method", "cit. R@10", "cit. R@100", "cit. R@1000", "cf. R@10", "cf. R@100",
                           "cf. R@1000"], rows)


def table4_markdown(t4: dict) -> str:
    rows = [[r["fold"], r["citing"], f"+{r['query_distractors']}", r["cited"], f"+{r['source_distractors']}",
             r["pos"], f"{r['neg']:,}"] for r in t4["rows"]]
    t, m = t4["total"], t4["mean"]
    rows.append(["Total", t["citing"], f"+{t['query_distractors']}", t["cited"], f"+{t['source_distractors']}",
                 t["pos"], f"{t['neg']:,}"])
    rows.append(["Mean", f"{m['citing']:.1f}", f"+{m['query_distractors']:.1f}", f"{m['cited']:.1f}",
                 f"+{m['source_distractors']:.1f}", f"{m['pos']:.1f}", f"{m['neg']:,.0f}"])
    return markdown_table(["Fold", "Citing", "+Distr.", "Cited", "+Distr.", "Pos.", "Neg."], rows)


def table12_rows(pair_rep: dict, view: str = "all") -> list[dict]:
    """Table 12 shape from a pairwise report's sweep (means over folds)."""
    rows = []
    for r in pair_rep["sweep"][view]:
        row = {"k": r["k"]}
        for stage in ("ret", "rer"):
            if stage in r:
                for m in ("inspect", "tp", "fp", "fn", "f1", "fpr", "smr"):
                    row[f"{stage}_{m}"] = r[stage][m]["mean"]
        rows.append(row)
    return rows


def table12_markdown(pair_rep: dict, view: str = "all") -> str:
    rows = []
    for r in table12_rows(pair_rep, view):
        rows.append([r["k"], f"{r['ret_inspect']:,.0f}", f"{r['ret_tp']:.1f}", f"{r['ret_fp']:,.1f}",
                     f"{r['ret_fn']:.1f}", f"{r['ret_f1']:.3f}", f"{1e4 * r['ret_fpr']:.2f}",
                     f"{1e4 * r['ret_smr']:.2f}"]
                    + ([f"{r['rer_inspect']:,.1f}", f"{r['rer_tp']:.1f}", f"{r['rer_fp']:,.1f}", f"{r['rer_f1']:.3f}",
                        f"{1e4 * r['rer_fpr']:.2f}"] if "rer_tp" in r else []))
    heads = ["k", "Ret. inspect", "TP", "FP", "FN", "F1", "FPR×1e4", "SMR×1e4"]
    if rows and len(rows[0]) > len(heads):
        heads += ["Rer. inspect", "TP", "FP", "F1", "FPR×1e4"]
    return markdown_table(heads, rows)


def _rows_csv(rows: list[dict]) -> str:
    """MACHINE CSV (byte-faithful; core.csv_export) of dict rows, columns from the first row."""
    return csv_text(list(rows[0]), rows, lineterminator="\r\n") if rows else ""


def per_query_csv(rep: dict) -> str:
    return _rows_csv(rep.get("per_query") or [])


def leaderboard(reports: list[dict], metric: str = "recall@100") -> list[dict]:
    """Runs sorted by a top-level pooled metric (best first), with their identity."""
    rows = [{"method": r["method"]["name"], "pool": r["pool"]["kind"], "split": r["split"]["name"],
             metric: r.get(metric), "std": (r["metrics"]["all"].get(metric) or {}).get("std")} for r in reports]
    return sorted(rows, key=lambda x: -(x[metric] if x[metric] is not None else -1))
