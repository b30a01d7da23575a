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
from django.db.models import F

from annotation.models import Batch, BatchCandidate, Judgement, Pair, Project
from annotation.stats import pair_selection as adaptive

_PICKED = ("id", "verse_a_id", "verse_b_id", "planned")


_STRUCTURE: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # batch id → (candidate verse ids, pairs [id, a, b] by id)


def _structure(batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """The batch's candidates (verse pks, position order) and real pairs as rows [id, a index, b index] sorted by
    id. Fixed once the batch exists except that a lead may mark a pair as an attention check: the cache is keyed by
    the batch and checked against the count of real pairs."""
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {q(Pair._meta.db_table)} WHERE batch_id = %s AND attention_answer_id IS NULL",
                       [batch.pk])
        n_real = cursor.fetchone()[0]
        cached = _STRUCTURE.get(batch.pk)
        if cached is not None and len(cached[1]) == n_real:
            return cached
        verses = np.array(BatchCandidate.objects.filter(batch=batch).order_by("position")
                          .values_list("verse_id", flat=True), np.int64)
        cursor.execute(f"SELECT id, verse_a_id, verse_b_id FROM {q(Pair._meta.db_table)} "
                       f"WHERE batch_id = %s AND attention_answer_id IS NULL ORDER BY id", [batch.pk])
        pairs = np.array(cursor.fetchall() or np.zeros((0, 3)), np.int64).reshape(-1, 3)
    order = np.argsort(verses)
    if len(pairs):
        pairs[:, 1] = order[np.searchsorted(verses, pairs[:, 1], sorter=order)]
        pairs[:, 2] = order[np.searchsorted(verses, pairs[:, 2], sorter=order)]
    if len(_STRUCTURE) > 500:
        _STRUCTURE.clear()
    _STRUCTURE[batch.pk] = (verses, pairs)
    return verses, pairs


def _batch_pairs_and_counts(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids of the never-served real pairs with their item indices [id, a, b], win-count matrix, candidate verse
    ids in position order): plain statements (the ORM's row objects cost more than the selection at 4,950 pairs)."""
    q = connection.ops.quote_name
    verses, pairs = _structure(batch)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {q(Pair._meta.db_table)} WHERE batch_id = %s AND taken = 0 "
                       f"AND attention_answer_id IS NULL", [batch.pk])
        free_ids = np.fromiter((r[0] for r in cursor.fetchall()), np.int64)
        cursor.execute(f"SELECT pair_id, chosen_id, COUNT(*) FROM {q(Judgement._meta.db_table)} "
                       f"WHERE batch_id = %s AND undone_at IS NULL GROUP BY pair_id, chosen_id", [batch.pk])
        wins = np.array(cursor.fetchall() or np.zeros((0, 3)), np.int64).reshape(-1, 3)
    counts = np.zeros((len(verses), len(verses)))
    if len(wins) and len(pairs):
        at = np.clip(np.searchsorted(pairs[:, 0], wins[:, 0]), 0, len(pairs) - 1)
        real = pairs[at, 0] == wins[:, 0]  # attention checks are not among the real pairs
        at, wins = at[real], wins[real]
        a, b = pairs[at, 1], pairs[at, 2]
        a_won = wins[:, 1] == verses[a]
        np.add.at(counts, (np.where(a_won, a, b), np.where(a_won, b, a)), wins[:, 2])
    free = pairs[np.isin(pairs[:, 0], free_ids)] if len(free_ids) else pairs[:0]
    return free, counts, verses


def batch_counts(batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """(win-count matrix over the batch's candidates in position order, their verse pks). Live judgements of real
    pairs only (attention checks and undone judgements left out)."""
    _, counts, verses = _batch_pairs_and_counts(batch)
    return counts, verses


_WARM: dict[int, np.ndarray] = {}  # batch id → last posterior mode (a warm start; any start gives the same mode)


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
    pairs, counts, _ = _batch_pairs_and_counts(batch)  # pairs: the never-served ones
    warm = _WARM.get(batch.pk)
    post = adaptive.posterior(counts, init=warm if warm is not None and len(warm) == len(counts) else None)
    if len(_WARM) > 1000:
        _WARM.clear()
    _WARM[batch.pk] = post.mean
    if stop_status(project, counts, post)["stopped"]:
        # The rule closes the batch once no pair waits for its second judgement (those are still served).
        if not Pair.objects.filter(batch=batch, taken__gte=1, taken__lt=F("planned")).exists():
            Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.CLOSED)
        return []
    free = pairs
    if not len(free):
        return []
    pks, ia, ib = free[:, 0], free[:, 1], free[:, 2]
    np_rng = np.random.default_rng(rng.getrandbits(64))
    # Twice what the set needs, in preference order: pairs locked by a concurrent request are skipped.
    order = adaptive.choose_pairs(post, ia, ib, min(2 * limit, len(free)),
                                  explore_share=project.adaptive_explore_share, rng=np_rng)
    n_explore = int(round(limit * project.adaptive_explore_share))
    # keep the requested exploration share among the first `limit`: the random picks come last in `order`
    wanted = [int(pks[x]) for x in order]
    cut = len(wanted) - int(round(len(wanted) * project.adaptive_explore_share))
    greedy, explore = wanted[:cut], wanted[cut:]
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
