"""Adaptive batches on the database: the batch's current posterior, its stop rule, and the new pairs of a set.

The statistics are `annotation.stats.pair_selection` (ASAP's information gain, pure numpy); this module reads a batch's
live judgements into a count matrix (one grouped query), asks it which of the never-served pairs to serve, and
locks them the way the rest of the scheduler does (FOR NO KEY UPDATE SKIP LOCKED, `taken = 0` checked under the
lock), so two annotators at once never get the same new pair. Called by `scheduling._pick` when the project's
mode `chooses_fresh`.
"""
from __future__ import annotations

import hashlib
import random
import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np
from django.db import connection
from django.db.models import F

from annotation.models import AnnotationSet, Assignment, Batch, BatchCandidate, Judgement, Pair, Project
from annotation.stats import pair_selection as adaptive
from annotation.stats.bt_bayes import bradley_terry_posterior, claim_converged
from annotation.stats.rank_claims import top_k_leverage, top_k_settled
from core import rawsql

_BLAS = None


def _one_blas_thread():
    """The fit's small matrices on one BLAS thread: in a web process beside others, BLAS threads only contend (a
    100 × 100 solve took 0.45 s instead of 0.3 ms on the loaded 2-core machine)."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController().select(user_api="blas")  # selected once: the full scan costs ~2 ms a call
    return _BLAS.limit(limits=1)

_PICKED = ("id", "verse_a_id", "verse_b_id", "planned")


_STRUCTURE: dict[int, tuple[tuple, np.ndarray, np.ndarray]] = {}  # batch id → (key, verses, pairs)


class _Versions(NamedTuple):
    """What changed in a batch since the cached state was read, from one statement (`_versions`)."""
    checks: int  # attention-check pairs
    free_checks: int  # attention-check pairs with taken = 0 (platform-built checks keep it)
    free: int  # pairs with taken = 0, attention checks included
    live: int  # live judgements (not undone)
    last_judgement: int  # their largest id, 0 when none
    last_assignment: int  # the largest assignment id of any batch, 0 when none


_VERSIONS_SQL: dict[str, str] = {}


def _versions(batch: Batch) -> _Versions:
    """One round trip instead of five: the counts the caches below are checked against. The free pairs are counted
    in the (batch, taken, rank) index, the attention checks in their partial index; the assignment id is the
    table's largest (a new assignment of another batch only costs a look at the assignments after it)."""
    sql = _VERSIONS_SQL.get(connection.vendor)
    if sql is None:
        q = connection.ops.quote_name
        pair, judgement = q(Pair._meta.db_table), q(Judgement._meta.db_table)
        sql = _VERSIONS_SQL[connection.vendor] = (
            # "batch_id + 0": find the few attention checks by their partial index, not by scanning the batch's pairs
            f"SELECT (SELECT COUNT(*) FROM {pair} WHERE attention_answer_id IS NOT NULL AND batch_id + 0 = %s), "
            f"(SELECT COUNT(*) FROM {pair} WHERE attention_answer_id IS NOT NULL AND batch_id + 0 = %s AND taken = 0), "
            f"(SELECT COUNT(*) FROM {pair} WHERE batch_id = %s AND taken = 0), "
            f"(SELECT COUNT(*) FROM {judgement} WHERE batch_id = %s AND undone_at IS NULL), "
            f"(SELECT MAX(id) FROM {judgement} WHERE batch_id = %s AND undone_at IS NULL), "
            f"(SELECT MAX(id) FROM {q(Assignment._meta.db_table)})")
    with connection.cursor() as cursor:
        cursor.execute(sql, [batch.pk] * 5)
        row = cursor.fetchone()
    return _Versions(*(int(x or 0) for x in row))


def _structure(batch: Batch, versions: _Versions | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The batch's candidates (verse pks, position order) and real pairs as rows [id, a index, b index] sorted by
    id. Fixed once the batch exists (its real pairs are all created with it) except that a lead may mark a pair as
    an attention check or the platform add checks: the cache is keyed by the batch and checked against its count of
    checks and its creation time (a rolled-back test database hands out a batch id again)."""
    key = (batch.created, (versions or _versions(batch)).checks)
    cached = _STRUCTURE.get(batch.pk)
    if cached is not None and cached[0] == key:
        return cached[1], cached[2]
    q = connection.ops.quote_name
    verses = np.array(BatchCandidate.objects.filter(batch=batch).order_by("position")
                      .values_list("verse_id", flat=True), np.int64)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, verse_a_id, verse_b_id FROM {q(Pair._meta.db_table)} "
                       f"WHERE batch_id = %s AND attention_answer_id IS NULL ORDER BY id", [batch.pk])
        pairs = np.array(cursor.fetchall() or np.zeros((0, 3)), np.int64).reshape(-1, 3)
    order = np.argsort(verses)
    if len(pairs):
        pairs[:, 1] = order[np.searchsorted(verses, pairs[:, 1], sorter=order)]
        pairs[:, 2] = order[np.searchsorted(verses, pairs[:, 2], sorter=order)]
    if len(_STRUCTURE) > 500:
        _STRUCTURE.clear()
    _STRUCTURE[batch.pk] = (key, verses, pairs)
    return verses, pairs


class _BatchState:
    """Per process and batch: the win counts read so far (extended by the judgements with a larger id, rebuilt when the
    live count says some were undone), the last posterior and its gains for all real pairs."""

    def __init__(self, n: int):
        self.counts = np.zeros((n, n))
        self.last_id = 0
        self.live = 0
        self.post: adaptive.Posterior | None = None
        self.gain: np.ndarray | None = None
        self.fitted_at: int | None = None
        self.stop: dict = {}
        self.free: np.ndarray | None = None  # never-served pairs (see `_free_mask`)
        self.last_assignment = 0
        self.pairs: np.ndarray | None = None  # the structure the counts were read against


_STATE: dict[int, _BatchState] = {}
_STATE_LOCK = threading.Lock()  # threads of one process share the cache: one updates a batch's state at a time


def _add_wins(counts: np.ndarray, pairs: np.ndarray, verses: np.ndarray, rows: np.ndarray) -> None:
    """rows [pair id, chosen verse, count]: add them to the count matrix (pairs not among the real ones are skipped)."""
    if not len(rows) or not len(pairs):
        return
    at = np.clip(np.searchsorted(pairs[:, 0], rows[:, 0]), 0, len(pairs) - 1)
    real = pairs[at, 0] == rows[:, 0]  # attention checks are not among the real pairs
    at, rows = at[real], rows[real]
    a, b = pairs[at, 1], pairs[at, 2]
    a_won = rows[:, 1] == verses[a]
    np.add.at(counts, (np.where(a_won, a, b), np.where(a_won, b, a)), rows[:, 2])


def _state(batch: Batch, versions: _Versions | None = None) -> tuple[_BatchState, np.ndarray, np.ndarray]:
    """The batch's state with its counts brought up to date: the new judgements only, or all of them again when the
    live count says some were undone."""
    q = connection.ops.quote_name
    versions = versions or _versions(batch)
    verses, pairs = _structure(batch, versions)
    state = _STATE.get(batch.pk)
    if state is None or state.counts.shape[0] != len(verses) or state.pairs is not pairs:
        if len(_STATE) > 500:
            _STATE.clear()
        state = _STATE[batch.pk] = _BatchState(len(verses))
        state.pairs = pairs
    live, max_id = versions.live, versions.last_judgement
    if live == state.live and max_id == state.last_id:
        return state, verses, pairs
    table = q(Judgement._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pair_id, chosen_id, 1, id FROM {table} WHERE batch_id = %s AND undone_at IS NULL "
                       f"AND id > %s AND id <= %s", [batch.pk, state.last_id, max_id])
        new = np.array(cursor.fetchall() or np.zeros((0, 4)), np.int64).reshape(-1, 4)
        if state.live + len(new) != live:  # some judgement was undone since: read them all again
            cursor.execute(f"SELECT pair_id, chosen_id, COUNT(*) FROM {table} "
                           f"WHERE batch_id = %s AND undone_at IS NULL AND id <= %s GROUP BY pair_id, chosen_id",
                           [batch.pk, max_id])
            new = np.array(cursor.fetchall() or np.zeros((0, 3)), np.int64).reshape(-1, 3)
            state.counts[:] = 0.0
            state.fitted_at = None
    _add_wins(state.counts, pairs, verses, new[:, :3])
    state.live, state.last_id = live, max_id
    return state, verses, pairs


def _batch_pairs_and_counts(batch: Batch) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids of the never-served real pairs with their item indices [id, a, b], win-count matrix, candidate verse
    ids in position order): plain statements (the ORM's row objects cost more than the selection at 4,950 pairs)."""
    q = connection.ops.quote_name
    verses, pairs = _structure(batch, _versions(batch))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {q(Pair._meta.db_table)} WHERE batch_id = %s AND taken = 0 "
                       f"AND attention_answer_id IS NULL", [batch.pk])
        free_ids = np.array(cursor.fetchall() or np.zeros((0, 1)), np.int64).reshape(-1)
        cursor.execute(f"SELECT pair_id, chosen_id, COUNT(*) FROM {q(Judgement._meta.db_table)} "
                       f"WHERE batch_id = %s AND undone_at IS NULL GROUP BY pair_id, chosen_id", [batch.pk])
        wins = np.array(cursor.fetchall() or np.zeros((0, 3)), np.int64).reshape(-1, 3)
    counts = np.zeros((len(verses), len(verses)))
    _add_wins(counts, pairs, verses, wins)
    free = pairs[np.isin(pairs[:, 0], free_ids)] if len(free_ids) else pairs[:0]
    return free, counts, verses


def batch_counts(batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    """(win-count matrix over the batch's candidates in position order, their verse pks). Live judgements of real
    pairs only (attention checks and undone judgements left out)."""
    _, counts, verses = _batch_pairs_and_counts(batch)
    return counts, verses


# The stop rule (`StopRule`, the project's `stop_*` settings): the posterior probability that the batch's reported
# top k hold ⌈recall · k⌉ of the true top k, strengths closer than the margin tied (`rank_claims.top_k_settled`).
# Whether it holds is decided on exact posterior draws (`stats.bradley_terry_posterior(exact=True)`), made by the
# `annotation.stop_check` job, never in a request, and cached per count matrix and rule. The cheap Laplace fit (the
# selection's own in the next-set path) is the gate: the exact check is queued only once every candidate is compared
# and the same probability on normal draws (`pair_selection.laplace_top_k`) is within `STOP_GATE` of the level.
STOP_DRAWS = 600
STOP_GATE, STOP_RECHECK, recheck_spacing = adaptive.STOP_GATE, adaptive.STOP_RECHECK, adaptive.recheck_spacing


class StopRule(NamedTuple):
    """A project's top-k stop rule (the `Project.stop_*` fields)."""
    k: int
    recall: float
    margin: float
    level: float

    def explain(self) -> str:
        """The rule in one plain sentence, as the dashboard and the planning page say it."""
        need = int(np.ceil(self.recall * self.k - 1e-9))
        which = f"all {self.k}" if need >= self.k else f"at least {need} of the {self.k}"
        nth = f"{self.k}{'th' if 10 <= self.k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(self.k % 10, 'th')}"
        return (f"stop when, with posterior probability ≥ {self.level:g}, {which} candidates ranked highest are truly "
                f"among the {self.k} strongest (a candidate within {self.margin:g} of the {nth} strongest counts "
                f"as one of them: strengths that close are treated as tied)")

    def settled(self, p: float, p_exact: float | None, p_none_missed: float | None, leverage=None) -> str:
        """What a stop under this rule claims, in its settings' words, with the exact set's probability and the
        claim's leverage (`rank_claims.top_k_leverage`) beside it."""
        need = int(np.ceil(self.recall * self.k - 1e-9))
        return (f"settled on converged exact draws: with posterior probability {p:.3f} (≥ {self.level:g}) at least "
                f"{need} of the {self.k} ranked highest are among the {self.k} strongest, a margin of {self.margin:g} "
                f"counted as a tie; that the {self.k} listed are exactly the {self.k} strongest: "
                f"{p_exact if p_exact is not None else float('nan'):.3f}; that none left out is more than "
                f"{self.margin:g} above the weakest listed: "
                f"{p_none_missed if p_none_missed is not None else float('nan'):.3f}"
                + (f"; removing {leverage} judgement(s) would flip the top {self.k} of the point fit"
                   if leverage is not None else ""))

    def as_list(self) -> list:
        return [self.k, self.recall, self.margin, self.level]


def stop_rule(project: Project) -> StopRule | None:
    """The project's top-k rule, None when no k is set (the rule is off)."""
    if project.stop_top_k is None:
        return None
    return StopRule(int(project.stop_top_k), float(project.stop_recall), float(project.stop_margin),
                    float(project.stop_level))


def laplace_settled(post: adaptive.Posterior, compared: np.ndarray, rule: StopRule) -> dict:
    """The rule's probability on the Laplace posterior `post` (the gate; `pair_selection.laplace_top_k`)."""
    return adaptive.laplace_top_k(post, compared, k=rule.k, recall=rule.recall, margin=rule.margin)


_EXACT: OrderedDict[bytes, dict] = OrderedDict()
_EXACT_LOCK = threading.Lock()


def exact_settled(counts: np.ndarray, rule: StopRule, draws: int = STOP_DRAWS, seed: int = 0) -> dict | None:
    """`top_k_settled` on exact posterior draws of the count matrix (``{"p", "expected_recall", …}``), or None with
    fewer than two judgements (no draws). Cached per count matrix and rule (the last 128)."""
    counts = np.ascontiguousarray(counts, float)
    key = hashlib.blake2b(counts.tobytes() + repr((rule, draws, seed)).encode(), digest_size=16,
                          person=str(counts.shape[0]).encode()[:16]).digest()
    with _EXACT_LOCK:
        if key in _EXACT:
            _EXACT.move_to_end(key)
            return _EXACT[key]
    post = bradley_terry_posterior(counts, n_draws=0, exact=True, gibbs_draws=draws, seed=seed)
    out = None
    if post.draws is not None:  # the rule holds on converged draws only ("converged": `claim_converged`)
        out = top_k_settled(post.strengths, post.draws, k=rule.k, recall=rule.recall, margin=rule.margin)
        out["converged"] = post.convergence is not None and claim_converged(out.pop("held", np.ones(4)))
        flip = top_k_leverage(counts, out["top"]) if len(out["top"]) == rule.k else None
        out["leverage"] = flip and (flip["n"] if flip["n"] is not None else f"more than {flip['cap']}")
    with _EXACT_LOCK:
        _EXACT[key] = out
        while len(_EXACT) > 128:
            _EXACT.popitem(last=False)
    return out


STOP_JOB = "annotation.stop_check"


def stop_check(batch: Batch) -> dict:
    """The stop rule's exact check of a batch as it stands (the `annotation.stop_check` job's work, off the annotator's
    request): its live judgements' count matrix, `STOP_DRAWS` exact draws, and the rule's probability on them.
    Returns ``{"judgements": N, "rule": [k, recall, margin, level], "p": float | None, "expected_recall": …}``
    (None with fewer than two judgements or no rule)."""
    counts = batch_counts(batch)[0]
    rule = stop_rule(batch.project)
    exact = exact_settled(counts, rule) if rule is not None else None
    return {"judgements": int(round(counts.sum())), "rule": rule.as_list() if rule else None,
            **{key: None if exact is None else exact.get(key)
               for key in ("p", "expected_recall", "p_exact", "p_none_missed", "converged", "leverage")}}


class StopCheck(NamedTuple):
    """What the `annotation.stop_check` jobs of a batch say now: the latest finished check's result for the
    project's current rule (`stop_check`'s dict, None while none finished), when it finished, and the check queued
    or running (``{"pk", "status", "progress", "progress_message"}``, None when none is)."""
    done: dict | None
    finished: object | None
    pending: dict | None


def read_stop_check(batch: Batch, judged: int, rule: StopRule) -> StopCheck:
    """The latest stored exact check of the batch under `rule` and the one in progress; makes no draws. Enqueues a
    check (a Job, sent when the request's transaction commits) when the stored one is stale and none is queued or
    running: none finished for this rule, or the last said "not settled" at least `recheck_spacing` judgements ago.
    The next-set path and the dashboard's stop-rule card read through here, so both show and act on the same draws."""
    from jobs.models import Job
    from jobs.services import job_create

    rows = list(Job.objects.filter(kind=STOP_JOB, params__batch_id=batch.pk).order_by("-pk")
                .values("pk", "status", "result", "finished", "progress", "progress_message")[:20])
    pending = next(({k: row[k] for k in ("pk", "status", "progress", "progress_message")} for row in rows
                    if row["status"] in (Job.Status.QUEUED, Job.Status.RUNNING)), None)
    last = next((row for row in rows if row["status"] == Job.Status.SUCCEEDED and row["result"]
                 and row["result"].get("rule") == rule.as_list()), None)
    done = last["result"] if last else None
    settled = done is not None and done["p"] is not None and done["p"] >= rule.level and done.get("converged")
    stale = done is None or (not settled
                             and judged - int(done["judgements"]) >= recheck_spacing(batch.n_candidates))
    if stale and pending is None:
        job = job_create(kind=STOP_JOB, params={"project_id": batch.project_id, "batch_id": batch.pk})
        pending = {"pk": job.pk, "status": job.status, "progress": job.progress, "progress_message": ""}
    return StopCheck(done, last["finished"] if last else None, pending)


def stop_status(project: Project, counts: np.ndarray, post: adaptive.Posterior | None = None,
                previous: dict | None = None, exact_source=None) -> dict:
    """How close the batch is to the lead's stop rules: judgements against the budget, the top-k rule's posterior
    probability against its level (`StopRule`), and whether the batch takes new pairs (`stopped`).

    Whether the top-k rule holds is decided on exact draws (``"posterior": "exact"``). The Laplace fit (`post`, the
    selection's own in the next-set path, else fitted here in milliseconds) is the gate: the exact figure is asked
    for once every candidate is compared and the Laplace probability is within `STOP_GATE` of the level; until then
    the Laplace figures are reported (``"posterior": "laplace"``) and the rule does not hold.

    `exact_source` (what the service's callers pass: the next-set path's and the dashboard's `read_stop_check`)
    gives the latest finished exact check, made by a job; the rule then holds only on that check's draws
    (``"exact_at"`` says at how many judgements it was made), and while none has finished the Laplace figures are
    shown and the rule does not hold. Without it the draws are made here (cached per batch state; the known-answer
    tests); `previous` (the batch's last status) then spaces them, waiting `recheck_spacing` judgements after draws
    that said "not settled"."""
    judged = int(round(counts.sum()))
    rule = stop_rule(project)
    out = {"judgements": judged, "budget": project.stop_budget, "rule": rule.explain() if rule else None,
           "level": rule.level if rule else None, "p": None, "expected_recall": None, "stopped": False, "reason": "",
           "posterior": None, "exact_at": (previous or {}).get("exact_at")}
    if project.stop_budget is not None and judged >= project.stop_budget:
        out.update(stopped=True, reason=f"budget of {project.stop_budget} judgements reached")
    compared = (counts.sum(0) + counts.sum(1)) > 0
    if rule is None or compared.sum() < 2:
        return out
    figures = laplace_settled(post if post is not None else adaptive.posterior(counts), compared, rule)
    how = "laplace"
    recent = (out["exact_at"] is not None
              and 0 <= judged - out["exact_at"] < recheck_spacing(counts.shape[0]))
    gate = compared.all() and figures["p"] >= rule.level - STOP_GATE
    if gate and exact_source is not None:  # the job's draws: nothing computed here
        done = exact_source(judged)
        if done is not None and done["p"] is not None:
            figures, how, out["exact_at"] = done, "exact", int(done["judgements"])
        out["exact_pending"] = done is None or int(done["judgements"]) < judged  # a newer check may come
    elif gate and not (previous is not None and recent):
        out["exact_at"] = judged
        exact = exact_settled(counts, rule)
        if exact is not None:
            figures, how = exact, "exact"
    out.update(p=float(figures["p"]), expected_recall=float(figures["expected_recall"]), posterior=how,
               p_exact=figures.get("p_exact"), p_none_missed=figures.get("p_none_missed"),
               leverage=figures.get("leverage"))
    if how == "exact" and compared.all() and out["p"] >= rule.level and not out["stopped"]:
        if not figures.get("converged"):
            out["reason"] = "the exact draws missed the convergence targets: the rule waits for a converged check"
        else:
            out.update(stopped=True, reason=rule.settled(out["p"], out["p_exact"], out["p_none_missed"], out["leverage"]))
    return out


def stored_stop_status(project: Project, batch: Batch) -> dict:
    """`stop_status` of a batch for a page or API read (the dashboard's stop-rule card): live counts and the Laplace
    gate (milliseconds), and in place of inline draws the latest stored `annotation.stop_check` result
    (`read_stop_check`, which queues a check when it is stale). Adds ``"exact_finished"`` (when the shown draws were
    made, None when none are shown) and ``"exact_job"`` (the check queued or running: pk, status, progress, message; None
    when none is). Makes no draws."""
    seen: list[StopCheck] = []

    def source(judged: int) -> dict | None:
        seen.append(read_stop_check(batch, judged, stop_rule(project)))
        return seen[-1].done

    status = stop_status(project, batch_counts(batch)[0], exact_source=source)
    check = seen[0] if seen else None
    status["exact_finished"] = check.finished if check is not None and status["posterior"] == "exact" else None
    status["exact_job"] = check.pending if check is not None else None
    return status


def _free_mask(batch: Batch, state: _BatchState, pairs: np.ndarray, versions: _Versions | None = None) -> np.ndarray:
    """Which of the batch's real pairs (rows of `pairs`) were never served (taken = 0). Kept in the batch's state:
    the assignments made since the last look mark their pairs served; when the count of free pairs in the database
    disagrees (a set expired and gave pairs back, or an assignment committed out of id order) the whole column is
    read again."""
    q = connection.ops.quote_name
    versions = versions or _versions(batch)
    n_free = versions.free - versions.free_checks
    with connection.cursor() as cursor:
        if state.free is not None and len(state.free) == len(pairs):
            if versions.last_assignment > state.last_assignment:
                cursor.execute(f"SELECT a.id, a.pair_id FROM {q(Assignment._meta.db_table)} a "
                               f"JOIN {q(AnnotationSet._meta.db_table)} s ON s.id = a.set_id "
                               f"WHERE a.id > %s AND s.batch_id = %s", [state.last_assignment, batch.pk])
                new = np.array(cursor.fetchall() or np.zeros((0, 2)), np.int64).reshape(-1, 2)
                state.last_assignment = max(versions.last_assignment, int(new[:, 0].max()) if len(new) else 0)
                _mark(state.free, pairs, new[:, 1], False)
            if int(state.free.sum()) == n_free:
                return state.free
        state.last_assignment = versions.last_assignment
        cursor.execute(f"SELECT id FROM {q(Pair._meta.db_table)} WHERE batch_id = %s AND taken = 0 "
                       f"AND attention_answer_id IS NULL", [batch.pk])
        free_ids = np.array(cursor.fetchall() or np.zeros((0, 1)), np.int64).reshape(-1)
    state.free = np.zeros(len(pairs), bool)
    _mark(state.free, pairs, free_ids, True)
    return state.free


def _mark(mask: np.ndarray, pairs: np.ndarray, ids: np.ndarray, value: bool) -> None:
    if len(ids) and len(pairs):
        at = np.clip(np.searchsorted(pairs[:, 0], ids), 0, len(pairs) - 1)
        mask[at[pairs[at, 0] == ids]] = value


_LOCK_TEMPLATES: dict[int, rawsql.QueryTemplate] = {}


def _lock_template(n: int) -> rawsql.QueryTemplate:
    """The never-served pairs among n given ids, locked FOR NO KEY UPDATE SKIP LOCKED: the ORM's query compiled once
    per n (`core.rawsql.QueryTemplate`; the ORM's own compilation took a third of the selection's time)."""
    template = _LOCK_TEMPLATES.get(n)
    if template is None:
        def build(**ids):
            return (Pair.objects.filter(pk__in=[ids[f"p{k}"] for k in range(n)], taken=0)
                    .select_for_update(skip_locked=True, of=("self",), no_key=True).values_list(*_PICKED))

        template = _LOCK_TEMPLATES.setdefault(n, rawsql.QueryTemplate(build, {f"p{k}": k + 1 for k in range(n)}))
    return template


def adaptive_fresh(batch: Batch, project: Project, limit: int, rng: random.Random) -> list[Pair]:
    """Up to `limit` never-served pairs of the batch chosen by `adaptive.choose_pairs`, locked; [] once the stop
    rule holds. Pairs another annotator holds locked meanwhile are skipped and replaced by the next choices.

    The posterior and the gains of all pairs are cached per batch and refitted when `adaptive.needs_refit` says so (at
    most `REFIT_EVERY` judgements behind; warm-started Newton; the design simulation refits on the same rule, so its
    figures are this service's); the counts are extended by the new judgements only."""
    if limit <= 0:
        return []
    versions = _versions(batch)
    with _STATE_LOCK, _one_blas_thread():
        state, _, pairs = _state(batch, versions)
        refit = state.post is None or adaptive.needs_refit(state.live, state.fitted_at)
        if refit:
            state.post = adaptive.refit(state.counts, state.post)
            state.gain = adaptive.CRITERIA[adaptive.DEFAULT_CRITERION](state.post, pairs[:, 1], pairs[:, 2])
            state.fitted_at = state.live
        if refit or state.stop.get("exact_pending"):  # between refits only to look for a check's newer result
            state.stop = stop_status(project, state.counts, state.post, previous=state.stop,
                                     exact_source=lambda judged: read_stop_check(batch, judged,
                                                                                stop_rule(project)).done)
        stop = state.stop
    if stop["stopped"] or (project.stop_budget is not None and state.live >= project.stop_budget):
        # The rule closes the batch once no pair waits for its second judgement (those are still served).
        if not Pair.objects.filter(batch=batch, taken__gte=1, taken__lt=F("planned")).exists():
            Batch.objects.filter(pk=batch.pk).update(status=Batch.Status.CLOSED)
        return []
    with _STATE_LOCK:
        free_at = np.flatnonzero(_free_mask(batch, state, pairs, versions))
    if not len(free_at):
        return []
    free = pairs[free_at]
    pks, ia, ib = free[:, 0], free[:, 1], free[:, 2]
    np_rng = np.random.default_rng(rng.getrandbits(64))
    # Twice what the set needs, in preference order: pairs locked by a concurrent request are skipped.
    order = adaptive.choose_pairs(state.post, ia, ib, min(2 * limit, len(free)),
                                  explore_share=project.adaptive_explore_share, rng=np_rng, gain=state.gain[free_at],
                                  explore_window=(adaptive.explore_window(state.live, len(state.post.mean))
                                                  if adaptive.LOCAL_EXPLORE else None))
    n_explore = int(round(limit * project.adaptive_explore_share))
    # keep the requested exploration share among the first `limit`: the random picks come last in `order`
    wanted = [int(pks[x]) for x in order]
    cut = len(wanted) - int(round(len(wanted) * project.adaptive_explore_share))
    greedy, explore = wanted[:cut], wanted[cut:]
    preference = greedy[: limit - n_explore] + explore[:n_explore] + greedy[limit - n_explore:] + explore[n_explore:]
    locked = {row[0]: row for row in _lock_template(len(preference)).rows(
        **{f"p{k}": pk for k, pk in enumerate(preference)})}
    picked = [Pair.from_db(connection.alias, _PICKED, locked[pk]) for pk in preference if pk in locked][:limit]
    if len(picked) < limit:  # concurrent requests hold the preferred pairs: the next free ones by rank
        more = (Pair.objects.filter(batch=batch, attention_answer__isnull=True, taken=0)
                .exclude(pk__in=[p.pk for p in picked]).select_for_update(skip_locked=True, of=("self",), no_key=True)
                .order_by("rank").values_list(*_PICKED)[: limit - len(picked)])
        picked += [Pair.from_db(connection.alias, _PICKED, row) for row in more]
    return picked
