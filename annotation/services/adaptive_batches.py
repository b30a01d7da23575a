"""Adaptive batches on the database: the batch's current posterior, its stop rule, and the new pairs of a set.

The statistics are `annotation.stats.pair_selection` (ASAP's information gain, pure numpy); this module reads a batch's
live judgements into a count matrix (one grouped query), asks it which of the never-served pairs to serve, and
locks them the way the rest of the scheduler does (FOR NO KEY UPDATE SKIP LOCKED, `taken = 0` checked under the
lock), so two annotators at once never get the same new pair. Called by `scheduling._pick` when the project's
mode `chooses_fresh`.
"""
from __future__ import annotations

import random

import numpy as np
from django.db import connection
from django.db.models import Count, F

from annotation.models import Batch, BatchCandidate, Judgement, Pair, Project
from annotation.stats import pair_selection as adaptive

_PICKED = ("id", "verse_a_id", "verse_b_id", "planned")


def batch_counts(batch: Batch) -> tuple[np.ndarray, dict[int, int]]:
    """(win-count matrix over the batch's candidates in position order, verse pk → index). Live judgements of
    real pairs only (attention checks and undone judgements left out)."""
    verses = list(BatchCandidate.objects.filter(batch=batch).order_by("position").values_list("verse_id", flat=True))
    index = {v: i for i, v in enumerate(verses)}
    counts = np.zeros((len(verses), len(verses)))
    rows = (Judgement.objects.filter(batch=batch, undone_at__isnull=True, pair__attention_answer__isnull=True)
            .values_list("pair__verse_a_id", "pair__verse_b_id", "chosen_id").annotate(n=Count("id")))
    for a, b, chosen, n in rows:
        winner, loser = (a, b) if chosen == a else (b, a)
        counts[index[winner], index[loser]] += n
    return counts, index


def stop_status(project: Project, counts: np.ndarray, post: adaptive.Posterior | None = None) -> dict:
    """How close the batch is to the lead's stop rule: judgements against the budget, the smallest adjacent-rank
    posterior probability against the threshold, and whether the batch takes new pairs (`stopped`)."""
    judged = int(round(counts.sum()))
    out = {"judgements": judged, "budget": project.stop_budget, "threshold": project.stop_adjacent_probability,
           "min_adjacent": None, "n_unsettled": None, "stopped": False, "reason": ""}
    if project.stop_budget is not None and judged >= project.stop_budget:
        out.update(stopped=True, reason=f"budget of {project.stop_budget} judgements reached")
    compared = (counts.sum(0) + counts.sum(1)) > 0
    if project.stop_adjacent_probability is not None and compared.sum() >= 2:
        if post is None:
            post = adaptive.posterior(counts)
        _, probs = adaptive.adjacent_order_probabilities(post)
        out["min_adjacent"] = float(probs.min())
        out["n_unsettled"] = int((probs < project.stop_adjacent_probability).sum())
        if compared.all() and out["n_unsettled"] == 0 and not out["stopped"]:
            out.update(stopped=True, reason=f"every adjacent pair ordered with probability ≥ "
                                            f"{project.stop_adjacent_probability:g}")
    return out


def adaptive_fresh(batch: Batch, project: Project, limit: int, rng: random.Random) -> list[Pair]:
    """Up to `limit` never-served pairs of the batch chosen by `adaptive.choose_pairs`, locked; [] once the stop
    rule holds. Pairs another annotator holds locked meanwhile are skipped and replaced by the next choices."""
    if limit <= 0:
        return []
    counts, index = batch_counts(batch)
    post = adaptive.posterior(counts)
    if stop_status(project, counts, post)["stopped"]:
        # The rule closes the batch once no pair waits for its second judgement (those are still served).
        if not Pair.objects.filter(batch=batch, taken__gte=1, taken__lt=F("planned")).exists():
            Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.CLOSED)
        return []
    free = list(Pair.objects.filter(batch=batch, attention_answer__isnull=True, taken=0)
                .values_list("pk", "verse_a_id", "verse_b_id"))
    if not free:
        return []
    pks = np.array([r[0] for r in free])
    ia = np.array([index[r[1]] for r in free])
    ib = np.array([index[r[2]] for r in free])
    np_rng = np.random.default_rng(rng.getrandbits(64))
    # Twice what the set needs, in preference order: pairs locked by a concurrent request are skipped.
    order = adaptive.choose_pairs(post, ia, ib, min(2 * limit, len(free)),
                                  explore_share=project.adaptive_explore_share, rng=np_rng)
    n_explore = int(round(limit * project.adaptive_explore_share))
    # keep the requested exploration share among the first `limit`: the random picks come last in `order`
    wanted = [int(pks[x]) for x in order]
    greedy, explore = wanted[: len(wanted) - int(round(2 * limit * project.adaptive_explore_share))], \
        wanted[len(wanted) - int(round(2 * limit * project.adaptive_explore_share)):]
    preference = greedy[: limit - n_explore] + explore[:n_explore] + greedy[limit - n_explore:] + explore[n_explore:]
    locked = {row[0]: row for row in Pair.objects.filter(pk__in=preference, taken=0)
              .select_for_update(skip_locked=True, of=("self",), no_key=True).values_list(*_PICKED)}
    picked = [Pair.from_db(connection.alias, _PICKED, locked[pk]) for pk in preference if pk in locked][:limit]
    if len(picked) < limit:  # concurrent requests hold the preferred pairs: the next free ones by rank
        more = (Pair.objects.filter(batch=batch, attention_answer__isnull=True, taken=0)
                .exclude(pk__in=[p.pk for p in picked]).select_for_update(skip_locked=True, of=("self",), no_key=True)
                .order_by("rank").values_list(*_PICKED)[: limit - len(picked)])
        picked += [Pair.from_db(connection.alias, _PICKED, row) for row in more]
    return picked
