"""The scheduler: serving sets of pairs, releasing abandoned sets.

Rules:
- An annotator gets a set of `project.set_size` pairs; `project.overlap_per_set` of them are
  overlap pairs judged twice. In inter-annotator mode the second judgement comes from another
  annotator: a set first takes pairs that others judged and that wait for a second judgement;
  when there are not enough, it promotes fresh pairs (planned = 2) for someone else to repeat.
  In test–retest mode the overlap slots repeat pairs this annotator judged in earlier sets.
- A pair is never handed out beyond `planned` judgements: its `taken` counter is raised under a
  row lock (SELECT … FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite serialises writers).
- Pilot batches: every member judges every pair; `planned`/`taken` are not used.
- Attention checks (pairs with `attention_answer`) are not part of the pool: each set gets up to
  `project.attention_per_set` of them that the annotator has not seen in this batch, on top of the
  set's pairs. Their `planned`/`taken` counters are unused; their judgements are never scored.
- A project's study set-up (services/study.py) comes first: no set is served while a step that is on is
  not done, nor after a failed comprehension check.
- A set not finished by `expires_at` is released: its open assignments expire and their pairs
  return to the pool. An annotator coming back resumes their open set.
"""
from __future__ import annotations

import datetime as dt
import random

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Membership, Pair, Project, Verse
from annotation.modes import mode_for
from annotation.services.adaptive_batches import adaptive_fresh
from annotation.services.errors import Conflict, NotAllowed, NotFound
from annotation.services.study import require_study_done, study_on
from core import rawsql
from core.roles import ANNOTATOR, has_role


def sets_release_expired(*, batch: Batch | None = None, now: dt.datetime | None = None) -> int:
    """Expire open sets past their deadline and return their unjudged pairs to the pool.

    Locks each set, then its open assignments (the same order as submit and undo), so a judgement
    arriving at the same moment is either stored before the release or treated as a late answer.
    """
    now = now or timezone.now()
    sets = AnnotationSet.objects.filter(status=AnnotationSet.Status.OPEN, expires_at__lt=now)
    if batch is not None:
        sets = sets.filter(batch=batch)
    released = 0
    with transaction.atomic(savepoint=False):
        for annotation_set in sets.select_related("batch").select_for_update(skip_locked=True, of=("self",), no_key=True):
            open_assignments = list(
                Assignment.objects.select_for_update(no_key=True).filter(set=annotation_set, status=Assignment.Status.OPEN)
                .values_list("pk", "pair_id"))
            pair_ids = [pair_id for _, pair_id in open_assignments]
            Assignment.objects.filter(pk__in=[pk for pk, _ in open_assignments]).update(status=Assignment.Status.EXPIRED)
            if pair_ids and not annotation_set.batch.pilot:
                Pair.objects.filter(pk__in=pair_ids, taken__gt=0).update(taken=F("taken") - 1)
                # The annotator who let the pair go never judged it: they are no longer its first judge.
                Pair.objects.filter(pk__in=pair_ids).filter(
                    Q(taken=0) | Q(first_annotator_id=annotation_set.annotator_id)).update(first_annotator=None)
            annotation_set.status = AnnotationSet.Status.EXPIRED
            annotation_set.save(update_fields=["status"])
            released += len(pair_ids)
    return released


def _locked(queryset, limit: int, *, query: bool = False):
    """The first `limit` pairs of `queryset` by rank, locked (skipping pairs others hold locked): a list, or
    with `query` the queryset."""
    if limit <= 0 and not query:
        return []
    locked = queryset.select_for_update(skip_locked=True, of=("self",), no_key=True).order_by("rank")[:limit]
    return locked if query else list(locked)


@transaction.atomic
def set_next(*, batch: Batch, annotator, rng: random.Random | None = None) -> AnnotationSet | None:
    """The annotator's current set in the batch: their open one, or a new one; None when done.

    Returns the AnnotationSet (its assignments in position order), or None if the batch holds no
    more pairs for this annotator.
    """
    # The membership check and the lock in one statement. One set at a time per annotator: concurrent
    # calls (a double click) queue on the membership row.
    member = has_role(annotator, ANNOTATOR) and Membership.objects.select_for_update(no_key=True).filter(
        project_id=batch.project_id, user=annotator, role=Membership.Role.ANNOTATOR).values_list("pk", flat=True).first()
    if not member:
        raise NotAllowed("You are not an annotator of this project.")
    return _serve(batch, annotator, rng)


@transaction.atomic
def set_next_in_batch(*, batch_id: int, annotator, rng: random.Random | None = None) -> tuple[Batch, AnnotationSet | None]:
    """`set_next` for a batch known by its id (the API): (the batch, the set or None). The batch with its
    project and reference is read by the statement that locks the annotator's membership row, which
    `set_next` does in two. NotFound when there is no such batch."""
    batch = _member_batch(batch_id, annotator)
    return batch, _serve(batch, annotator, rng)


def _member_batch(batch_id: int, annotator) -> Batch:
    q = connection.ops.quote_name
    tables = {k: q(m._meta.db_table) for k, m in (("m", Membership), ("b", Batch), ("p", Project), ("v", Verse))}
    lock = " FOR NO KEY UPDATE OF m" if connection.features.has_select_for_no_key_update else (
        " FOR UPDATE OF m" if connection.features.has_select_for_update_of else "")
    row = None
    if has_role(annotator, ANNOTATOR) and rawsql.id_in_range(Batch, batch_id):
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT m.id, {rawsql.columns(Batch, 'b')}, {rawsql.columns(Project, 'p')}, {rawsql.columns(Verse, 'v')} "
                f"FROM {tables['m']} m JOIN {tables['b']} b ON b.project_id = m.project_id "
                f"JOIN {tables['p']} p ON p.id = b.project_id JOIN {tables['v']} v ON v.id = b.reference_id "
                f"WHERE b.id = %s AND m.user_id = %s AND m.role = %s{lock}",
                [batch_id, annotator.pk, Membership.Role.ANNOTATOR.value])
            row = cursor.fetchone()
    if row is None:
        if not (rawsql.id_in_range(Batch, batch_id) and Batch.objects.filter(pk=batch_id).exists()):
            raise NotFound("No Batch matches the given query.")
        raise NotAllowed("You are not an annotator of this project.")
    n_batch, n_project = len(Batch._meta.concrete_fields), len(Project._meta.concrete_fields)
    batch = rawsql.instance(Batch, row[1:1 + n_batch])
    batch.project = rawsql.instance(Project, row[1 + n_batch:1 + n_batch + n_project])
    batch.reference = rawsql.instance(Verse, row[1 + n_batch + n_project:])
    return batch


def _open_sets(batch: Batch, annotator, now) -> list[AnnotationSet]:
    """The batch's open sets that are the annotator's or past their deadline, newest first."""
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {rawsql.columns(AnnotationSet, 's')} FROM {q(AnnotationSet._meta.db_table)} s "
            f"WHERE s.batch_id = %s AND s.status = %s AND (s.annotator_id = %s OR s.expires_at < %s) "
            f"ORDER BY s.created DESC",
            [batch.pk, AnnotationSet.Status.OPEN.value, annotator.pk,
             AnnotationSet._meta.get_field("expires_at").get_db_prep_value(now, connection)])
        return [rawsql.instance(AnnotationSet, row) for row in cursor.fetchall()]


def require_accepting(batch: Batch, annotator, *, doing: str = "serves no more pairs", served: bool = False) -> None:
    """Refuse (409, or 403 for the study steps) unless the batch takes work from the annotator now: the batch is
    open, its project is not archived, and the annotator has done every study step that is on. Serving a set,
    storing a choice and undoing one ask the same question; ``doing`` ends the sentences that say why not. `served`:
    the answer to a pair served before the batch closed, which a closed batch still takes."""
    if batch.status != Batch.Status.OPEN and not served:
        raise Conflict(f"The batch {batch.name!r} is complete (closed): it {doing}.")
    if batch.project.archived_at is not None:
        raise Conflict(f"The project {batch.project.name!r} is archived: it {doing}.")
    if study_on(batch.project):  # consent, training, comprehension check: no real pairs before them
        require_study_done(batch.project, annotator, batch_id=batch.pk)


def _serve(batch: Batch, annotator, rng: random.Random | None) -> AnnotationSet | None:
    require_accepting(batch, annotator)
    now = timezone.now()
    # One read finds the annotator's open set and any set past its deadline; only when there is one of the
    # latter (rare) does the release run, with its locks, and the annotator's set is read again after it.
    open_sets = _open_sets(batch, annotator, now)
    if any(s.expires_at < now for s in open_sets):
        sets_release_expired(batch=batch, now=now)
        current = (AnnotationSet.objects.filter(batch=batch, annotator=annotator, status=AnnotationSet.Status.OPEN)
                   .order_by("-created").first())
    else:
        current = next((s for s in open_sets if s.annotator_id == annotator.pk), None)
    if current is not None:
        return current
    project: Project = batch.project
    rng = rng or random.Random()
    picks, counters = (_pick_pilot(batch, annotator, project), None) if batch.pilot else _pick(batch, annotator, project, rng)
    if not picks:
        return None
    if project.attention_per_set:
        picks += _pick_attention(batch, annotator, project.attention_per_set, rng)
    order = list(range(len(picks)))
    rng.shuffle(order)
    rows = []
    for position, index in enumerate(order):
        pair, is_overlap, is_repeat = picks[index]
        left_is_a = rng.random() < 0.5
        rows.append((pair.pk, position, pair.verse_a_id if left_is_a else pair.verse_b_id,
                     pair.verse_b_id if left_is_a else pair.verse_a_id, is_overlap, is_repeat))
    return _create_set(batch, annotator, now + dt.timedelta(minutes=project.set_timeout_minutes), rows, counters)


def _create_set(batch: Batch, annotator, expires_at: dt.datetime, rows: list[tuple], counters) -> AnnotationSet:
    """Write the pairs' counters (`counters`: the statement of `_counters`, or None), the set and its
    assignments (`rows`: pair, position, left, right, is_overlap, is_repeat).

    On PostgreSQL one statement (the counters and the set as data-modifying CTEs of the assignments'
    insert: one round trip, all or nothing like the rest of the transaction), elsewhere three."""
    q = connection.ops.quote_name
    annotation_set = AnnotationSet(batch=batch, annotator=annotator, status=AnnotationSet.Status.OPEN,
                                   created=timezone.now(), expires_at=expires_at, completed_at=None)
    prep = {name: AnnotationSet._meta.get_field(name).get_db_prep_save(getattr(annotation_set, name), connection)
            for name in ("created", "expires_at")}
    insert_set = (f"INSERT INTO {q(AnnotationSet._meta.db_table)} (batch_id, annotator_id, status, created, expires_at) "
                  f"VALUES (%s, %s, %s, %s, %s)")
    set_params = [batch.pk, annotator.pk, AnnotationSet.Status.OPEN.value, prep["created"], prep["expires_at"]]
    columns = "set_id, pair_id, annotator_id, position, left_id, right_id, is_overlap, is_repeat, status"
    assignments = q(Assignment._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(rows))
            counters_sql, counters_params = counters or ("", [])
            cursor.execute(
                "WITH " + (f"c AS ({counters_sql}), " if counters else "") + f"s AS ({insert_set} RETURNING id) "
                f"INSERT INTO {assignments} ({columns}) SELECT s.id, v.pair_id, %s, v.position, v.left_id, v.right_id, "
                f"v.is_overlap, v.is_repeat, %s FROM s CROSS JOIN (VALUES {values}) "
                f"AS v (pair_id, position, left_id, right_id, is_overlap, is_repeat) RETURNING set_id",
                [*counters_params, *set_params, annotator.pk, Assignment.Status.OPEN.value,
                 *(value for row in rows for value in row)])
            annotation_set.pk = cursor.fetchone()[0]
        else:
            if counters:
                cursor.execute(*counters)
            cursor.execute(insert_set, set_params)
            annotation_set.pk = cursor.lastrowid
            cursor.execute(f"INSERT INTO {assignments} ({columns}) VALUES "
                           + ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(rows)),
                           [value for row in rows for value in (annotation_set.pk, row[0], annotator.pk, *row[1:],
                                                                 Assignment.Status.OPEN.value)])
    annotation_set._state.adding, annotation_set._state.db = False, connection.alias
    return annotation_set


def _waiting(batch: Batch, annotator, project: Project):
    """The batch's pairs waiting for another judgement that the project's mode lets `annotator` give."""
    mode = mode_for(project)  # who may give a second judgement: annotation/modes.py
    return Pair.objects.filter(batch=batch, attention_answer__isnull=True, taken__gte=1, taken__lt=F("planned")).filter(
        mode.waiting_for(user=annotator, batch_ids=[batch.pk]))


_PICKED = ("id", "verse_a_id", "verse_b_id", "planned")  # in the model's field order (Pair.from_db reads them so)
_TEMPLATES: dict[tuple, rawsql.QueryTemplate] = {}


def _locked_picks(kind: str, batch: Batch, annotator, project: Project, limit: int) -> list[Pair]:
    """The first `limit` pairs by rank of the waiting (`kind` "waiting") or fresh ("fresh") pool, locked
    (FOR NO KEY UPDATE SKIP LOCKED): the ORM's query, compiled once per mode, kind and limit
    (`core.rawsql.QueryTemplate`), run as plain SQL."""
    if limit <= 0:
        return []
    mode = mode_for(project)
    key = (kind, mode, limit)
    template = _TEMPLATES.get(key)
    if template is None:
        def build(batch: int, user: int | None = None):
            stand_in = Batch(pk=batch)
            pool = (_waiting(stand_in, get_user_model()(pk=user), project) if kind == "waiting"
                    else Pair.objects.filter(batch=stand_in, attention_answer__isnull=True, taken=0))
            return _locked(pool.values_list(*_PICKED), limit, query=True)

        ids = {"batch": batch.pk, "user": annotator.pk} if kind == "waiting" else {"batch": batch.pk}
        template = _TEMPLATES.setdefault(key, rawsql.QueryTemplate(build, ids))
    return [Pair.from_db(connection.alias, _PICKED, row) for row in template.rows(batch=batch.pk, user=annotator.pk)]


def _pick(batch: Batch, annotator, project: Project, rng: random.Random) -> tuple[list[tuple[Pair, bool, bool]], tuple | None]:
    """The set's pairs [(pair, is_overlap, is_repeat)] and the statement that raises their counters. New pairs
    come by rank, or, when the mode `chooses_fresh`, from the batch's posterior (`services/adaptive_batches.py`)."""
    size, overlap = project.set_size, project.overlap_per_set
    mode = mode_for(project)
    repeats = mode.marks_repeat
    second = _locked_picks("waiting", batch, annotator, project, overlap)
    if mode.chooses_fresh:
        fresh = adaptive_fresh(batch, project, size - len(second), rng)
    else:
        fresh = _locked_picks("fresh", batch, annotator, project, size - len(second))
    if len(second) + len(fresh) < size:  # no fresh pairs left: fill the set with pairs awaiting repeats
        second += _locked(_waiting(batch, annotator, project).exclude(pk__in=[p.pk for p in second]),
                          size - len(second) - len(fresh))
    promote = {pair.pk for pair in fresh[: max(overlap - len(second), 0)]}
    picks = [(pair, True, repeats) for pair in second] + [(pair, pair.pk in promote or pair.planned > 1, False)
                                                          for pair in fresh]
    return picks, _counters(second, fresh, promote, annotator)


def _counters(second: list[Pair], fresh: list[Pair], promote: set[int], annotator) -> tuple[str, list] | None:
    """The counters of the picked pairs as one UPDATE (sql, params): every pair is taken once more (the rows
    are locked), fresh ones (taken was 0) get this annotator as first judge, promoted ones planned ≥ 2.
    Plain SQL: `bulk_update` wrote the same as one CASE per row and field, and building it took more CPU
    than the rest of the scheduling."""
    ids = [p.pk for p in second + fresh]
    if not ids:
        return None
    promoted = sorted(promote) or [0]  # ids start at 1: [0] matches nothing
    table = connection.ops.quote_name(Pair._meta.db_table)
    return (f"UPDATE {table} SET taken = taken + 1, "
            f"first_annotator_id = CASE WHEN taken = 0 THEN %s ELSE first_annotator_id END, "
            f"planned = CASE WHEN id IN ({', '.join(['%s'] * len(promoted))}) AND planned < 2 THEN 2 ELSE planned END "
            f"WHERE id IN ({', '.join(['%s'] * len(ids))})", [annotator.pk, *promoted, *ids])


def _pick_pilot(batch: Batch, annotator, project: Project) -> list[tuple[Pair, bool, bool]]:
    seen = Assignment.objects.filter(pair__batch=batch, annotator=annotator).exclude(status=Assignment.Status.EXPIRED)
    pairs = list(Pair.objects.filter(batch=batch, attention_answer__isnull=True).exclude(pk__in=seen.values("pair_id"))
                 .order_by("rank")[: project.set_size])
    return [(pair, True, False) for pair in pairs]


def _pick_attention(batch: Batch, annotator, n: int, rng: random.Random) -> list[tuple[Pair, bool, bool]]:
    """Up to n attention-check pairs of the batch this annotator has not been shown, drawn with `rng` (a
    seeded caller, the simulation, gets the same checks on every database; ORDER BY RANDOM() did not)."""
    seen = Assignment.objects.filter(pair__batch=batch, annotator=annotator).exclude(status=Assignment.Status.EXPIRED)
    checks = list(Pair.objects.filter(batch=batch, attention_answer__isnull=False).exclude(pk__in=seen.values("pair_id"))
                  .order_by("rank"))
    return [(pair, False, False) for pair in rng.sample(checks, min(n, len(checks)))]
