"""Turning a project's judgements into agreement, consistency and similarity scores.

Loads live judgements into the array form of `annotation.stats` (items = candidate positions in
their batch, winners by candidate, never by screen side) and assembles JSON-ready reports for the
lead dashboard, the export API and `manage.py export_scores`. The heavy full report runs as the
`annotation.analytics` job (`annotation/jobs.py`); the dashboard shows its last result and when it was computed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.expressions import RawSQL
from django.utils import timezone

from annotation import stats
from annotation.models import AnalyticsBatchResult, Batch, BatchCandidate, Judgement, Project
from annotation.stats.pair_selection import adjacent_rank_claims
from annotation.stats.rank_claims import favoured_order, order_claims, top_k_leverage
from core.numeric import json_safe

SCORE_COLUMNS = [
    "batch", "batch_id", "reference_id", "reference_text", "candidate_id", "candidate_text", "wins", "comparisons",
    "normalized_score", "win_share", "bt_strength", "bt_low", "bt_high", "bt_mc_error", "rank", "rank_tied", "p_above_next", "order_claim", "n_annotators", "gold_score",
    "bt_aware_strength", "rank_aware", "interval_note", "posterior",
]

# The orientation the classic (paper-comparable) agreement figures use: label `winner_is_b` needs an
# order of the two candidates, and the analytics order is the candidates' batch position.
ORIENTATION_RULE = "a = the candidate with the lower position in its batch (the order candidates were added)"


@dataclass(frozen=True, slots=True)
class CandidateVerse:
    verse_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A batch candidate as the reports read it (read as plain values, not model instances)."""
    verse_id: int  # the verse's primary key, as BatchCandidate.verse_id
    position: int
    gold_score: float | None
    verse: CandidateVerse


@dataclass
class ProjectData:
    judgements: stats.Judgements
    batches: list[Batch]
    candidates: dict[int, list[Candidate]]  # batch index -> candidates by position
    annotators: list[str]
    created: np.ndarray  # epoch seconds per judgement
    response_ms: np.ndarray | None = None  # per judgement, NaN when unknown


def _fetch(query) -> list[tuple]:
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def load_project_data(project: Project, *, batch_ids: list[int] | None = None, annotator: str | None = None,
                      since=None, until=None) -> ProjectData:
    """Live judgements of a project (optionally filtered) in array form.

    One query for the judgements, read through the raw cursor into one numpy array (no model or
    datetime objects per row; times as epoch seconds computed by the database), then mapped to
    candidate positions with numpy; candidates as plain values (10× faster than model instances for
    9,900 candidates). Reading the pairs apart and matching them in numpy instead of the join was
    measured no faster on SQLite (issue 16), so the join stays.
    """
    batches = list(Batch.objects.filter(project=project).select_related("reference").order_by("id"))
    if batch_ids is not None:
        wanted = set(batch_ids)
        batches = [b for b in batches if b.pk in wanted]
    batch_index = {b.pk: i for i, b in enumerate(batches)}
    candidates: dict[int, list[Candidate]] = {i: [] for i in range(len(batches))}
    keys = []
    for batch_id, verse_pk, position, gold, verse_id, text in (
            BatchCandidate.objects.filter(batch__in=batches).order_by("batch_id", "position").values_list(
                "batch_id", "verse_id", "position", "gold_score", "verse__verse_id", "verse__text")):
        bi = batch_index[batch_id]
        keys.append(((bi << 32) | verse_pk, len(candidates[bi])))
        candidates[bi].append(Candidate(verse_pk, position, gold, CandidateVerse(verse_id, text)))
    # Attention checks (known-answer pairs, possibly with the reference as a candidate) are never scored.
    rows = Judgement.objects.filter(batch__in=batches, undone_at__isnull=True, pair__attention_answer__isnull=True)
    if annotator:
        rows = rows.filter(annotator__username=annotator)
    if since:
        rows = rows.filter(created__gte=since)
    if until:
        rows = rows.filter(created__lte=until)
    epoch = ("CAST(EXTRACT(EPOCH FROM annotation_judgement.created) AS double precision)"
             if connection.vendor == "postgresql" else "(julianday(annotation_judgement.created) - 2440587.5) * 86400.0")
    fetched = []
    if batches:  # an empty `batch__in` compiles to no SQL at all (EmptyResultSet)
        fetched = _fetch(rows.order_by("id").annotate(epoch=RawSQL(epoch, [])).values_list(
            "batch_id", "annotator_id", "pair__verse_a_id", "pair__verse_b_id", "chosen_id", "response_ms", "epoch"))
    n = len(fetched)
    # ids < 2**53 are exact in float64; a missing response time becomes NaN
    table = np.array(fetched, dtype=np.float64).reshape(n, 7) if n else np.zeros((0, 7))
    del fetched
    batch_col, annotator_ids, verse_a, verse_b, chosen = (table[:, k].astype(np.int64) for k in range(5))
    response, created = table[:, 5].copy(), table[:, 6].copy()
    del table
    ids = np.unique(annotator_ids)
    names = dict(get_user_model().objects.filter(pk__in=ids.tolist()).values_list("pk", "username"))
    annotators = sorted(names.values())
    rank = {name: i for i, name in enumerate(annotators)}
    aidx = (np.array([rank[names[int(i)]] for i in ids], np.int64)[np.searchsorted(ids, annotator_ids)] if n
            else np.zeros(0, np.int64))
    bmap_ids = np.array(sorted(batch_index), np.int64)
    bmap_pos = np.array([batch_index[b] for b in sorted(batch_index)], np.int64)
    bidx = bmap_pos[np.searchsorted(bmap_ids, batch_col)] if n else np.zeros(0, np.int64)
    keys.sort()
    key_arr = np.array([k for k, _ in keys], np.int64)
    pos_arr = np.array([p for _, p in keys], np.int64)

    def positions(verse_col: np.ndarray) -> np.ndarray:
        return pos_arr[np.searchsorted(key_arr, (bidx << 32) | verse_col)] if n else np.zeros(0, np.int64)

    left, right, winner = positions(verse_a), positions(verse_b), positions(chosen)
    sizes = [len(candidates[i]) for i in range(len(batches))]  # batches differ in size (e.g. 98 vs 99)
    n_items = max(sizes, default=0)
    j = stats.from_winner_ids(aidx, left, right, winner, n_items=max(n_items, 1), batch=bidx, timestamp=created,
                              n_annotators=max(len(annotators), 1), n_batches=max(len(batches), 1),
                              batch_items=sizes if batches else None)
    return ProjectData(judgements=j, batches=batches, candidates=candidates, annotators=annotators, created=created,
                       response_ms=response)


def _annotators_per_candidate(j: stats.Judgements, n_batches: int) -> np.ndarray:
    """Distinct annotators who judged a pair involving each candidate, per batch (n_batches × n_items)."""
    if not len(j):
        return np.zeros((n_batches, j.n_items), dtype=np.int64)
    m = j.n_annotators
    both = np.unique(np.concatenate([(j.batch * j.n_items + j.a) * m + j.annotator,
                                     (j.batch * j.n_items + j.b) * m + j.annotator]))
    exact = np.zeros(n_batches * j.n_items, dtype=np.int64)
    np.add.at(exact, both // m, 1)
    return exact.reshape(n_batches, j.n_items)


def score_rows(data: ProjectData, *, n_boot: int = 200, seed: int = 0, aware: dict | None = None,
               workers: int = 1, exact: bool = True) -> list[dict]:
    """Per batch and candidate: wins, comparisons, normalised score (wins / max wins in the batch,
    as the released STS gold), win share, Bradley–Terry strength (the posterior mean of the draws its 95 % credible
    interval comes from: exact draws, see annotation/stats/bt_bayes.py) with the Monte Carlo error of the interval's
    ends, and rank; ``posterior`` says what gave the interval
    (`posterior_label`) and ``interval_note`` warns when it is not the converged exact posterior.

    A candidate nobody compared has no normalised score, strength, interval or rank (None) and is
    left out of the ranking; with one judgement in a batch the intervals are None ("undefined").
    ``n_boot`` is kept for the API's signature: the posterior needs no resampling (it sets the number
    of posterior draws for rank intervals). ``aware``: ``{batch index: strengths}`` of the
    annotator-aware fit, added as ``bt_aware_strength``/``rank_aware``. ``exact``: exact posterior draws (seconds
    per batch at 99 candidates; the default, for every batch and design). Requests pass False (`LIVE_APPROXIMATE`):
    the exact draws are the analytics job's.
    """
    return [row for rows in batch_score_rows(data, n_boot=n_boot, seed=seed, aware=aware, workers=workers,
                                             exact=exact) for row in rows]


# A request's live scores: the importance/Laplace posterior instead of the exact draws, said so.
LIVE_APPROXIMATE = ("approximate interval, computed for this request: the exact posterior draws are made by the "
                    "analytics job (the stored scores)")


def posterior_label(post: stats.BTPosterior, exact: bool) -> str:
    """What gave a batch's intervals, for the export's ``posterior`` column and the dashboard: ``exact`` (the exact
    draws, no convergence alarm), ``exact, not converged`` (the alarm: `bt_bayes.convergence_warning`), ``laplace fallback`` (the
    exact sampler failed), ``approximate (importance|laplace)`` (a request's live scores) or ``none`` (no intervals)."""
    if post.reason:
        return "none"
    if post.method == "gibbs":
        return "exact, not converged" if post.convergence["alarm"] else "exact"
    return "laplace fallback" if exact else f"approximate ({post.method})"


def batch_score_rows(data: ProjectData, *, n_boot: int = 200, seed: int = 0, aware: dict | None = None,
                     workers: int = 1, exact: bool = True, separation: dict | None = None) -> list[list[dict]]:
    """:func:`score_rows`, one list per batch of `data.batches`; `workers` > 1 fits batches in that
    many threads (numpy's linear algebra releases the GIL). `separation`, a dict, receives each batch's
    `stats.separation_reliability` by batch index."""
    if not data.batches:
        return []
    seen = _annotators_per_candidate(data.judgements, len(data.batches))

    def one(bi: int) -> list[dict]:
        return _one_batch_scores(data, bi, seen, n_boot=n_boot, seed=seed, aware=aware,
                                 exact=exact, separation=separation)

    if workers > 1 and len(data.batches) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, range(len(data.batches))))
    return [one(bi) for bi in range(len(data.batches))]


ORDER_DRAWS = 200  # the dashboard's analytics job draws 200 (n_boot) or more


def _one_batch_scores(data: ProjectData, bi: int, seen: np.ndarray, *, n_boot: int, seed: int,
                      aware: dict | None, exact: bool, separation: dict | None = None) -> list[dict]:
    j = data.judgements
    batch = data.batches[bi]
    cands = data.candidates[bi]
    n = len(cands)
    counts = j.count_matrix(batch=bi)[:n, :n] if len(j) else np.zeros((n, n))
    post = stats.bradley_terry_posterior(counts, n_draws=max(n_boot, 0), seed=seed, exact=exact)
    note = post.reason or post.note or (None if exact else LIVE_APPROXIMATE)
    if separation is not None:
        separation[bi] = stats.separation_reliability(counts, post.strengths, post.sd)
    label = posterior_label(post, exact)
    # The ranking shown: each adjacent pair in the order the posterior draws favour, or tied (`favoured_order`), once
    # there are enough draws for a share to mean something (`ORDER_DRAWS`); the mode's ranking with fewer
    ordered = post.draws is not None and len(post.draws) >= ORDER_DRAWS
    shown = favoured_order(post.strengths, post.draws, post.weights) if ordered else post.rank
    claims = (order_claims(np.where(shown > 0, -shown.astype(float), np.nan) if ordered else post.strengths,
                           post.draws, post.weights) if post.draws is not None
              else adjacent_rank_claims(counts, post.strengths, post.prior_sd))
    wins = counts.sum(axis=1)
    comparisons = wins + counts.sum(axis=0)
    top = wins.max() if n else 0
    aware_theta = (aware or {}).get(bi)
    aware_rank = np.zeros(n, np.int64)
    if aware_theta is not None:
        ok = np.flatnonzero(np.isfinite(aware_theta[:n]))
        aware_rank[ok] = (-aware_theta[ok]).argsort(kind="stable").argsort(kind="stable") + 1
    rows = []
    for pos, cand in enumerate(cands):
        compared = bool(comparisons[pos])
        rows.append({
            "batch": batch.name, "batch_id": batch.pk, "reference_id": batch.reference.verse_id,
            "reference_text": batch.reference.text,
            "candidate_id": cand.verse.verse_id, "candidate_text": cand.verse.text,
            "wins": int(wins[pos]), "comparisons": int(comparisons[pos]),
            "normalized_score": float(wins[pos] / top) if top and compared else None,
            "win_share": float(wins[pos] / comparisons[pos]) if compared else None,
            "bt_strength": float(post.strengths[pos]) if compared else None,
            "bt_low": float(post.lower[pos]), "bt_high": float(post.upper[pos]),
            "bt_mc_error": float(post.mcse[pos]) if post.mcse is not None else None,
            "rank": int(shown[pos]) if compared else None,
            "rank_tied": bool(compared and (shown == shown[pos]).sum() > 1),
            "p_above_next": float(claims["p_next"][pos]),
            "order_claim": bool(claims["claim"][pos]),
            "n_annotators": int(seen[bi, pos]), "gold_score": cand.gold_score,
            "bt_aware_strength": float(aware_theta[pos]) if aware_theta is not None and compared else None,
            "rank_aware": int(aware_rank[pos]) if aware_rank[pos] else None,
            "interval_note": note if compared else "never compared: no strength, rank or interval",
            "posterior": label,
        })
    return json_safe(rows)


def annotator_aware_report(data: ProjectData) -> tuple[dict, dict]:
    """Annotator-aware Bradley–Terry: per-annotator reliability and how much each batch's ranking moves.

    Returns:
        ``(report, {batch index: aware strengths})``.
    """
    j = data.judgements
    if not len(j):
        return {"reliability": [], "shift": []}, {}
    fit = stats.annotator_aware_bt(j)
    strengths = {bi: fit.strengths[bi] for bi in range(len(data.batches))}
    shift = []
    for bi, batch in enumerate(data.batches):
        n = len(data.candidates[bi])
        if not n:
            continue
        plain = stats.bradley_terry_posterior(j.count_matrix(batch=bi)[:n, :n], n_draws=0).strengths
        row = stats.ranking_shift(plain, fit.strengths[bi][:n])
        if row["n"]:
            shift.append(dict(row, batch=batch.name))
    reliability = [{"annotator": name, "reliability": fit.reliability[k], "n_judgements": fit.n_judgements[k]}
                   for k, name in enumerate(data.annotators)]
    return json_safe({"reliability": reliability, "shift": shift, "iterations": fit.iterations,
                   "converged": fit.converged}), strengths


def attention_pass_rates(project: Project) -> dict[str, dict]:
    """Per annotator: attention checks answered and passed (chose the known answer)."""
    from django.db.models import Count, F, Q

    rows = (Judgement.objects.filter(batch__project=project, undone_at__isnull=True,
                                     pair__attention_answer__isnull=False)
            .values("annotator__username")
            .annotate(n=Count("id"), passed=Count("id", filter=Q(chosen_id=F("pair__attention_answer_id")))))
    return {r["annotator__username"]: {"n": r["n"], "passed": r["passed"]} for r in rows}


def position_bias(project: Project) -> dict[str, dict]:
    """Per annotator: live judgements of real pairs and how many chose the left screen side, with the Wilson 95 %
    interval of the left share. Sides are randomised per screen, so an interval that excludes ½ is a position bias
    (the choices are still stored by candidate)."""
    from django.db.models import Count, Q

    rows = (Judgement.objects.filter(batch__project=project, undone_at__isnull=True, pair__attention_answer__isnull=True)
            .values("annotator__username").annotate(n=Count("id"), left=Count("id", filter=Q(chose_left=True))))
    out = {}
    z = 1.959963984540054
    for r in rows:
        n, share = r["n"], r["left"] / r["n"]
        centre = (share + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        out[r["annotator__username"]] = {"n": n, "left": r["left"], "share": share, "low": centre - half,
                                         "high": centre + half, "biased": not (centre - half <= 0.5 <= centre + half)}
    return out


def per_annotator_report(data: ProjectData, triads: dict | None = None,
                         attention: dict[str, dict] | None = None, sides: dict[str, dict] | None = None) -> list[dict]:
    """One row per annotator: agreement with the others' majority, consistency (circular triads per
    complete triple over their batches), test–retest, median response time and the fast flag."""
    j = data.judgements
    if not len(j):
        return []
    majority = stats.agreement_with_majority(j)
    retest = stats.retest_agreement(j)
    times = stats.response_times(j.annotator, data.response_ms if data.response_ms is not None
                                 else np.full(len(j), np.nan), j.n_annotators)
    circ: dict[str, list[int]] = {}
    for row in (triads or {}).get("per_annotator", []):
        c = circ.setdefault(row["annotator"], [0, 0])
        c[0] += row.get("n_circular") or 0
        c[1] += row.get("n_complete_triples") or 0
    counts = np.bincount(j.annotator, minlength=j.n_annotators)
    rows = []
    for k, name in enumerate(data.annotators):
        c = circ.get(name, [0, 0])
        rows.append({
            "annotator": name, "n_judgements": int(counts[k]),
            "majority_agreement": majority[k]["agreement"], "majority_units": majority[k]["n_units"],
            "circular": c[0], "complete_triples": c[1], "circular_share": c[0] / c[1] if c[1] else None,
            "retest_n": retest[k]["n_repeated"], "retest_agreement": retest[k]["agreement"],
            "median_ms": times[k]["median_ms"], "fast_share": times[k]["fast_share"], "fast_flag": times[k]["flag"],
            "attention_n": (attention or {}).get(name, {}).get("n", 0),
            "attention_passed": (attention or {}).get(name, {}).get("passed", 0),
            "attention_rate": ((attention or {})[name]["passed"] / (attention or {})[name]["n"]
                               if (attention or {}).get(name, {}).get("n") else None),
            "left_share": (sides or {}).get(name, {}).get("share"), "left_low": (sides or {}).get(name, {}).get("low"),
            "left_high": (sides or {}).get(name, {}).get("high"),
            "position_biased": bool((sides or {}).get(name, {}).get("biased", False)),
        })
    return json_safe(rows)


def agreement_report(data: ProjectData) -> dict:
    j = data.judgements
    if not len(j):
        return {"annotators": data.annotators, "n_judgements": 0}
    table = stats.label_table(j)
    kappa = stats.cohen_kappa_matrix(table)
    fleiss = stats.fleiss_kappa_judgements(table)
    alpha = stats.krippendorff_alpha_judgements(table)
    return json_safe({
        "annotators": data.annotators,
        "n_judgements": len(j),
        # Headline figures: invariant to which candidate is called "a" (docs/statistics.md).
        "symmetric": stats.orientation_invariant_agreement(table),
        # Paper-comparable classic coefficients below depend on this orientation rule.
        "orientation_rule": ORIENTATION_RULE,
        "cohen": {"kappa": kappa.kappa, "n_shared": kappa.n_shared, "mean": kappa.mean},
        "fleiss": fleiss.as_dict(),
        "krippendorff": alpha.as_dict(),
        "retest": [dict(row, annotator=data.annotators[row["annotator"]]) if "annotator" in row else row
                   for row in stats.retest_agreement(j)],
        "split_half": [dict(row, batch=data.batches[row["batch"]].name) for row in stats.split_half_reliability(j)],
    })


def _triad_texts(data: ProjectData, bi: int, triads) -> list[list[str]]:
    cands = data.candidates[bi]
    return [[cands[int(i)].verse.verse_id + " — " + cands[int(i)].verse.text for i in triple] for triple in triads]


def triads_report(data: ProjectData, *, list_cap: int = 20, majority_list_cap: int = 0) -> dict:
    """Circular triads per annotator × batch, with at most `list_cap` cycles listed as verse texts (the
    dashboard shows them for the batch on screen), and of the pooled majority per batch: counts only
    unless `majority_list_cap` (no page, API or export shows those cycles; listed, 20 per batch, they made
    the stored summary 395 KiB instead of 74 KiB on 100 batches: perf/dashboard_bench.py). Every row has
    ``triads`` (a list, maybe empty)."""
    j = data.judgements
    if not len(j):
        return {"per_annotator": [], "majority": []}
    per = []
    for row in stats.triads_per_annotator(j, list_cap=list_cap):
        bi = row.pop("batch")
        row["batch"] = data.batches[bi].name
        row["annotator"] = data.annotators[row["annotator"]]
        row["triads"] = _triad_texts(data, bi, row.get("triads", []))
        per.append(row)
    majority = []
    for row in stats.majority_triads(j, list_cap=majority_list_cap):
        bi = row.pop("batch")
        row["batch"] = data.batches[bi].name
        row["triads"] = _triad_texts(data, bi, row.get("triads", []))
        majority.append(row)
    return json_safe({"per_annotator": per, "majority": majority})


def timeline(data: ProjectData, *, points: int = 12) -> dict:
    """Cumulative agreement and per-annotator progress at `points` moments between first and last judgement."""
    j = data.judgements
    if not len(j):
        return {"times": [], "fleiss": [], "krippendorff": [], "fleiss_symmetric": [], "kendall_u": [], "progress": {}}
    t0, t1 = float(data.created.min()), float(data.created.max())
    cuts = np.linspace(t0, t1, points) if t1 > t0 else np.array([t1])
    out = {"times": [], "fleiss": [], "krippendorff": [], "fleiss_symmetric": [], "kendall_u": [],
           "progress": {name: [] for name in data.annotators}}
    for cut in cuts:
        mask = data.created <= cut + 1e-6
        sub = j.subset(mask)
        table = stats.label_table(sub)
        out["times"].append(cut)
        out["fleiss"].append(stats.fleiss_kappa_judgements(table).value)
        out["krippendorff"].append(stats.krippendorff_alpha_judgements(table).value)
        out["fleiss_symmetric"].append(stats.fleiss_kappa_symmetric(table).value)
        out["kendall_u"].append(stats.kendall_u(table).value)
        counts = np.bincount(sub.annotator, minlength=len(data.annotators))
        for k, name in enumerate(data.annotators):
            out["progress"][name].append(int(counts[k]))
    return json_safe(out)


def directionality(rows: list[dict]) -> list[dict]:
    """A→B vs B→A for every two batch references that are candidates of each other's batches: our
    normalised scores (None until that batch has judgements) beside the imported gold's."""
    ours = {(r["reference_id"], r["candidate_id"]): r["normalized_score"] for r in rows}
    gold = {(r["reference_id"], r["candidate_id"]): r["gold_score"] for r in rows}
    references = sorted({r["reference_id"] for r in rows})
    result = []
    for i, a in enumerate(references):
        for b in references[i + 1:]:
            if (a, b) not in ours and (b, a) not in ours:
                continue
            result.append({"a": a, "b": b, "a_to_b": ours.get((a, b)), "b_to_a": ours.get((b, a)),
                           "gold_a_to_b": gold.get((a, b)), "gold_b_to_a": gold.get((b, a))})
    return json_safe(result)


def _graph_warning(data: ProjectData, batch_rows: list[dict]) -> str | None:
    """`stats.comparison_graph_warning` for one batch (its rows give the batch's index)."""
    if not batch_rows or not len(data.judgements):
        return None
    bi = next(k for k, b in enumerate(data.batches) if b.pk == batch_rows[0]["batch_id"])
    n = len(data.candidates[bi])
    return stats.comparison_graph_warning(data.judgements.count_matrix(batch=bi)[:n, :n])


def _model_expected_triads(data: ProjectData, per_batch: list[list[dict]], rows: list[dict]) -> dict[str, dict]:
    """{batch name: {annotator: circular triads the batch's fitted Bradley–Terry strengths expect on that
    annotator's complete triples}} (`stats.model_expected_circular`), for each per-annotator triad row. Stored in
    the batch piece's details (the triad rows stay what `triads_report` gives, live or stored)."""
    out: dict[str, dict] = {}
    j = data.judgements
    names = {name: k for k, name in enumerate(data.annotators)}
    batch_index = {b.name: bi for bi, b in enumerate(data.batches)}
    for row in rows:
        bi, k = batch_index.get(row.get("batch")), names.get(row.get("annotator"))
        if bi is None or k is None or not len(j):
            continue
        n = len(data.candidates[bi])
        sel = (j.batch == bi) & (j.annotator == k) if j.batch is not None else (j.annotator == k)
        decided = np.zeros((n, n))
        decided[j.a[sel], j.b[sel]] = 1
        decided = np.maximum(decided, decided.T)
        theta = np.array([np.nan if r["bt_strength"] is None else r["bt_strength"] for r in per_batch[bi]])
        out.setdefault(row["batch"], {})[row["annotator"]] = stats.model_expected_circular(decided, theta)
    return out


def project_report_parts(project: Project, *, n_boot: int = 200, progress=None,
                         workers: int = 1) -> tuple[dict, list[dict]]:
    """What the lead dashboard shows, JSON-ready, in two parts: the project-wide summary (agreement,
    per-annotator figures, timeline, triad totals, the batch index) and one piece per batch (its score
    rows, its triads per annotator, its directionality rows), stored separately by the job."""
    step = progress or (lambda fraction, message: None)
    step(0.05, "loading judgements")
    data = load_project_data(project)
    step(0.2, "annotator-aware Bradley–Terry")
    aware, aware_strengths = annotator_aware_report(data)
    step(0.35, f"scores for {len(data.batches)} batch(es)")
    separation: dict[int, dict] = {}
    per_batch = batch_score_rows(data, n_boot=n_boot, aware=aware_strengths, workers=workers, separation=separation)
    rows = [row for batch_rows in per_batch for row in batch_rows]
    step(0.6, "agreement")
    agreement = agreement_report(data)
    if len(data.judgements):
        agreement["separation"] = json_safe([
            dict(separation[bi], batch=batch.name, **claim_leverage(data, bi, per_batch[bi], project.stop_top_k))
            for bi, batch in enumerate(data.batches)])
    step(0.75, "circular triads")
    triads = triads_report(data)
    step(0.9, "timeline")
    direction = directionality(rows)
    expected_model = _model_expected_triads(data, per_batch, triads["per_annotator"])
    per_annotator: dict[str, list[dict]] = {}
    for row in triads["per_annotator"]:
        per_annotator.setdefault(row["batch"], []).append(row)
    pieces, index, offset = [], [], 0
    for batch, batch_rows in zip(data.batches, per_batch):
        ref = batch.reference.verse_id
        pieces.append({"batch": batch, "row_offset": offset, "scores": batch_rows,
                       "triads": per_annotator.get(batch.name, []),
                       "details": {"directionality": [d for d in direction if ref in (d["a"], d["b"])],
                                   "triads_expected_model": expected_model.get(batch.name, {}),
                                   "graph_warning": _graph_warning(data, batch_rows)}})
        index.append({"id": batch.pk, "name": batch.name, "reference_id": ref, "n_rows": len(batch_rows),
                      "row_offset": offset, "n_judged": sum(1 for r in batch_rows if r["comparisons"])})
        offset += len(batch_rows)
    summary = {
        "annotator_aware": aware,
        "per_annotator": per_annotator_report(data, triads, attention_pass_rates(project), position_bias(project)),
        "project": project.name,
        "computed_at": timezone.now().isoformat(),
        "n_judgements": len(data.judgements),
        "agreement": agreement,
        "timeline": timeline(data),
        "directionality": direction if len(direction) <= DIRECTIONALITY_IN_SUMMARY else [],
        "n_directionality": len(direction),
        "triad_totals": _triad_totals(triads["per_annotator"]),
        "majority_triads": triads["majority"],
        "batches": index,
        "n_rows": offset,
        "n_boot": n_boot,
        "stored": "per batch",
    }
    return summary, pieces


def claim_leverage(data: ProjectData, bi: int, rows: list[dict], k: int | None) -> dict:
    """``{"top_k", "leverage"}``: the leverage (`rank_claims.top_k_leverage`) of the claim "the first k of the
    shown ranking (ties by position) are the k strongest", k the project's stop-rule k (None: no claim)."""
    ranked = sorted((r["rank"], pos) for pos, r in enumerate(rows) if r["rank"] is not None)
    if not k or k >= len(ranked):
        return {"top_k": k, "leverage": None}
    n = len(rows)
    flip = top_k_leverage(data.judgements.count_matrix(batch=bi)[:n, :n], [pos for _, pos in ranked[:k]])
    return {"top_k": k, "leverage": flip["n"] if flip["n"] is not None else f"more than {flip['cap']}"}


def project_report(project: Project, *, n_boot: int = 200, progress=None) -> dict:
    """The whole report in one dict (summary plus every batch's scores and triads)."""
    summary, pieces = project_report_parts(project, n_boot=n_boot, progress=progress)
    return dict(summary, scores=[row for piece in pieces for row in piece["scores"]],
                triads={"per_annotator": [row for piece in pieces for row in piece["triads"]],
                        "majority": summary["majority_triads"]})


DIRECTIONALITY_IN_SUMMARY = 200  # more rows than this are read per batch from the pieces


def _triad_totals(rows: list[dict]) -> list[dict]:
    """Per-annotator triad totals over all batches."""
    totals: dict[str, dict] = {}
    for row in rows:
        total = totals.setdefault(row["annotator"], {"annotator": row["annotator"], "batches": 0, "n_circular": 0,
                                                     "n_complete_triples": 0, "expected_random": 0.0})
        total["batches"] += 1
        total["n_circular"] += row["n_circular"] or 0
        total["n_complete_triples"] += row["n_complete_triples"] or 0
        total["expected_random"] += row["expected_random"] or 0.0
    return sorted(totals.values(), key=lambda t: t["annotator"])


def analytics_store(*, job, project: Project, pieces: list[dict]) -> None:
    """Write the job's per-batch pieces (replacing any from an earlier run of the same job)."""
    job_id = getattr(job, "id", None) or job.pk
    AnalyticsBatchResult.objects.filter(job_id=job_id).delete()
    AnalyticsBatchResult.objects.bulk_create([
        AnalyticsBatchResult(job_id=job_id, project=project, batch=piece["batch"], position=position,
                             row_offset=piece["row_offset"], n_rows=len(piece["scores"]), scores=piece["scores"],
                             triads=piece["triads"], details=json_safe(piece["details"]))
        for position, piece in enumerate(pieces)], batch_size=200)


ANALYTICS_JOB = "annotation.analytics"


def analytics_in_progress(project: Project):
    """The project's analytics job queued or running (the newest), or None."""
    from jobs.models import Job

    return (Job.objects.filter(kind=ANALYTICS_JOB, params__project_id=project.pk,
                               status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
            .defer("log", "result").order_by("-created").first())


def analytics_enqueue(project: Project, *, owner=None):
    """The project's analytics job in progress, or a new one (sent when the transaction commits): one at a time per
    project (the project row is locked while looking). Returns (job, created)."""
    from django.db import transaction

    from jobs.services import job_create

    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        running = analytics_in_progress(project)
        if running is not None:
            return running, False
        return job_create(kind=ANALYTICS_JOB, params={"project_id": project.pk}, owner=owner), True
