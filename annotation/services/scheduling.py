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
- A set not finished by `expires_at` is released: its open assignments expire and their pairs
  return to the pool. An annotator coming back resumes their open set.
"""
from __future__ import annotations

import datetime as dt
import random

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Membership, Pair, Project
from annotation.modes import mode_for
from annotation.services.errors import Conflict, NotAllowed
from core.roles import ANNOTATOR, has_role


def check_can_annotate(*, batch: Batch, user) -> None:
    from annotation.selectors import user_can_annotate

    if not user_can_annotate(project=batch.project, user=user):
        raise NotAllowed("You are not an annotator of this project.")
    if batch.status != Batch.Status.OPEN:
        raise Conflict(f"The batch {batch.name!r} is closed.")


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


def _locked(queryset, limit: int) -> list[Pair]:
    if limit <= 0:
        return []
    return list(queryset.select_for_update(skip_locked=True, of=("self",), no_key=True).order_by("rank")[:limit])


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
    if batch.status != Batch.Status.OPEN:
        raise Conflict(f"The batch {batch.name!r} is closed.")
    now = timezone.now()
    # One read finds the annotator's open set and any set past its deadline; only when there is one of the
    # latter (rare) does the release run, with its locks, and the annotator's set is read again after it.
    open_sets = list(AnnotationSet.objects.filter(batch=batch, status=AnnotationSet.Status.OPEN).filter(
        Q(annotator=annotator) | Q(expires_at__lt=now)).order_by("-created"))
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
    picks = _pick_pilot(batch, annotator, project) if batch.pilot else _pick(batch, annotator, project)
    if not picks:
        return None
    if project.attention_per_set:
        picks += _pick_attention(batch, annotator, project.attention_per_set)
    annotation_set = AnnotationSet.objects.create(
        batch=batch, annotator=annotator, expires_at=now + dt.timedelta(minutes=project.set_timeout_minutes)
    )
    assignments = []
    order = list(range(len(picks)))
    rng.shuffle(order)
    for position, index in enumerate(order):
        pair, is_overlap, is_repeat = picks[index]
        left_is_a = rng.random() < 0.5
        assignments.append(Assignment(
            set=annotation_set, pair=pair, annotator=annotator, position=position,
            left_id=pair.verse_a_id if left_is_a else pair.verse_b_id,
            right_id=pair.verse_b_id if left_is_a else pair.verse_a_id,
            is_overlap=is_overlap, is_repeat=is_repeat,
        ))
    Assignment.objects.bulk_create(assignments)
    return annotation_set


def _pick(batch: Batch, annotator, project: Project) -> list[tuple[Pair, bool, bool]]:
    size, overlap = project.set_size, project.overlap_per_set
    pool = Pair.objects.filter(batch=batch, attention_answer__isnull=True)
    mode = mode_for(project)  # who may give a second judgement: annotation/modes.py
    waiting = pool.filter(taken__gte=1, taken__lt=F("planned")).filter(
        mode.waiting_for(user=annotator, batch_ids=[batch.pk]))
    repeats = mode.marks_repeat
    second = _locked(waiting, overlap)
    fresh = _locked(pool.filter(taken=0), size - len(second))
    if len(second) + len(fresh) < size:  # no fresh pairs left: fill the set with pairs awaiting repeats
        second += _locked(waiting.exclude(pk__in=[p.pk for p in second]), size - len(second) - len(fresh))
    promote = {pair.pk for pair in fresh[: max(overlap - len(second), 0)]}
    for pair in second:
        pair.taken += 1
    for pair in fresh:
        pair.taken = 1
        pair.first_annotator_id = annotator.pk
        if pair.pk in promote:
            pair.planned = max(pair.planned, 2)
    _write_counters(second, fresh, promote, annotator)
    return [(pair, True, repeats) for pair in second] + [(pair, pair.pk in promote or pair.planned > 1, False)
                                                         for pair in fresh]


def _write_counters(second: list[Pair], fresh: list[Pair], promote: set[int], annotator) -> None:
    """The counters of the picked pairs in one UPDATE: every pair is taken once more (the rows are locked, so
    `taken + 1` is what the objects hold), fresh ones (taken was 0) get this annotator as first judge, promoted
    ones planned ≥ 2. Plain SQL: `bulk_update` wrote the same as one CASE per row and field, and building it took
    more CPU than the rest of the scheduling."""
    ids = [p.pk for p in second + fresh]
    if not ids:
        return
    promoted = sorted(promote) or [0]  # ids start at 1: [0] matches nothing
    table = connection.ops.quote_name(Pair._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET taken = taken + 1, "
            f"first_annotator_id = CASE WHEN taken = 0 THEN %s ELSE first_annotator_id END, "
            f"planned = CASE WHEN id IN ({', '.join(['%s'] * len(promoted))}) AND planned < 2 THEN 2 ELSE planned END "
            f"WHERE id IN ({', '.join(['%s'] * len(ids))})",
            [annotator.pk, *promoted, *ids])


def _pick_pilot(batch: Batch, annotator, project: Project) -> list[tuple[Pair, bool, bool]]:
    seen = Assignment.objects.filter(pair__batch=batch, annotator=annotator).exclude(status=Assignment.Status.EXPIRED)
    pairs = list(Pair.objects.filter(batch=batch, attention_answer__isnull=True).exclude(pk__in=seen.values("pair_id"))
                 .order_by("rank")[: project.set_size])
    return [(pair, True, False) for pair in pairs]


def _pick_attention(batch: Batch, annotator, n: int) -> list[tuple[Pair, bool, bool]]:
    """Up to n attention-check pairs of the batch this annotator has not been shown (random order)."""
    seen = Assignment.objects.filter(pair__batch=batch, annotator=annotator).exclude(status=Assignment.Status.EXPIRED)
    checks = Pair.objects.filter(batch=batch, attention_answer__isnull=False).exclude(pk__in=seen.values("pair_id"))
    return [(pair, False, False) for pair in checks.order_by("?")[:n]]
