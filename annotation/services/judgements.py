"""Recording judgements: idempotent submit, undo of the last choice in a set."""
from __future__ import annotations

import datetime as dt
import uuid

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Pair
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound


def judgement_submit(
    *, annotator, assignment_id: int, chosen_verse_id: int, client_uuid: uuid.UUID | str, response_ms: int | None = None,
    pair_id: int | None = None,
) -> tuple[Judgement, bool]:
    """Store the annotator's choice for an assignment. Returns (judgement, created).

    Lock order is set, then assignment (as in undo and in the release of expired sets), so a
    submit, an undo and a release of the same set never interleave. A retry with the same
    `client_uuid` and the same choice returns the stored judgement (created False) and stores
    nothing; the same `client_uuid` with another choice, or after its judgement was undone, is a
    conflict (a new choice needs a new UUID). `pair_id`, when given, is the pair the annotator saw:
    a choice sent for an assignment that shows another pair is refused.

    The usual path is six SQL statements including authentication (token, roles, the locks, the insert, the
    assignment marked done, the set completed when nothing in it is open): the UUID is looked up only
    when the insert says it is taken (unique constraint) or the pair is already judged (a retry).
    """
    client_uuid = _as_uuid(client_uuid)
    try:
        return _submit(annotator=annotator, assignment_id=assignment_id, chosen_verse_id=chosen_verse_id,
                       client_uuid=client_uuid, response_ms=response_ms, pair_id=pair_id)
    except IntegrityError:
        # Rolled back whole: the UUID was used before, or a concurrent duplicate of this choice won.
        existing = Judgement.objects.filter(client_uuid=client_uuid).first()
        if existing is not None:
            return _replay(existing, annotator=annotator, assignment_id=assignment_id, chosen_verse_id=chosen_verse_id)
        raise Conflict("This pair was judged concurrently; reload the set.") from None


def _replay(existing: Judgement, *, annotator, assignment_id: int, chosen_verse_id: int) -> tuple[Judgement, bool]:
    """A submit whose client_uuid is stored already: the stored row for a true retry, else 409."""
    if existing.annotator_id != annotator.pk or existing.assignment_id != assignment_id:
        raise Conflict("This client_uuid was already used for another judgement.")
    if existing.undone_at is not None:
        raise Conflict("This choice was undone; a new choice needs a new client_uuid.")
    if existing.chosen_id != chosen_verse_id:
        raise Conflict(f"This client_uuid was already used for another choice (verse {existing.chosen_id}); "
                       "a new choice needs a new client_uuid.")
    return existing, False


@transaction.atomic
def _submit(*, annotator, assignment_id: int, chosen_verse_id: int, client_uuid: uuid.UUID, response_ms: int | None,
            pair_id: int | None) -> tuple[Judgement, bool]:
    # One statement locks the set, then the assignment: PostgreSQL takes the row locks in the order of
    # FOR NO KEY UPDATE OF (set, assignment), the order undo and the release of expired sets use.
    assignment = (Assignment.objects.select_for_update(of=("set", "self"), no_key=True)
                  .select_related("set__batch", "pair").filter(pk=assignment_id).first())
    if assignment is None:
        raise NotFound(f"No assignment {assignment_id}.")
    annotation_set = assignment.set
    if pair_id is not None and pair_id != assignment.pair_id:
        raise Conflict(f"This choice was made on pair {pair_id}, but assignment {assignment.pk} shows pair "
                       f"{assignment.pair_id}; nothing was stored.")
    if assignment.status == Assignment.Status.DONE:
        existing = Judgement.objects.filter(client_uuid=client_uuid).first()
        if existing is not None:
            return _replay(existing, annotator=annotator, assignment_id=assignment.pk, chosen_verse_id=chosen_verse_id)
    if assignment.annotator_id != annotator.pk:
        raise NotAllowed("This pair is not assigned to you.")
    batch: Batch = annotation_set.batch
    if batch.status != Batch.Status.OPEN:
        raise Conflict(f"The batch {batch.name!r} is closed; judgements are no longer accepted.")
    pair: Pair = assignment.pair
    if chosen_verse_id not in (pair.verse_a_id, pair.verse_b_id):
        raise AnnotationError("The chosen verse is not one of the two candidates of this pair.")
    if assignment.status == Assignment.Status.DONE:
        raise Conflict("This pair is already judged in this set; undo it first to change the choice.")
    if assignment.status == Assignment.Status.EXPIRED:
        _retake_expired(assignment, batch, annotator)
    judgement = Judgement.objects.create(
        assignment=assignment, annotator=annotator, pair=pair, batch=batch, set=annotation_set,
        chosen_id=chosen_verse_id, left_id=assignment.left_id, chose_left=chosen_verse_id == assignment.left_id,
        response_ms=response_ms, client_uuid=client_uuid,
    )
    _mark_done(assignment_id=assignment.pk, set_id=annotation_set.pk,
               complete_set=annotation_set.status == AnnotationSet.Status.OPEN)
    return judgement, True


def _mark_done(*, assignment_id: int, set_id: int, complete_set: bool) -> None:
    """The assignment done and, with `complete_set`, the set completed when no open assignment is left in it
    (one statement that reads the assignments after this one's update, under the set's row lock).

    Plain SQL on purpose: these two fixed statements run on every choice, and building them through the ORM
    (the NOT EXISTS subquery above all) cost ten times as much CPU as sending them."""
    quote = connection.ops.quote_name
    assignments, sets = quote(Assignment._meta.db_table), quote(AnnotationSet._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {assignments} SET status = %s WHERE id = %s", [Assignment.Status.DONE.value, assignment_id])
        if complete_set:
            now = AnnotationSet._meta.get_field("completed_at").get_db_prep_value(timezone.now(), connection)
            cursor.execute(
                f"UPDATE {sets} SET status = %s, completed_at = %s WHERE id = %s AND status = %s AND NOT EXISTS "
                f"(SELECT 1 FROM {assignments} WHERE set_id = %s AND status = %s)",
                [AnnotationSet.Status.COMPLETED.value, now, set_id, AnnotationSet.Status.OPEN.value, set_id,
                 Assignment.Status.OPEN.value])


def _as_uuid(value: uuid.UUID | str) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise AnnotationError("client_uuid is not a UUID.") from None


def _retake_expired(assignment: Assignment, batch: Batch, annotator) -> None:
    """A late answer on a released assignment is kept if the pair still has room for it and the
    annotator holds no other live presentation of it (one person never fills two overlap slots unless the
    project's mode allows it, as test–retest does; in a pilot batch every member judges every pair exactly once).

    The annotator's membership row is locked first, as `set_next` does, so a late answer and the
    serving of a new set that could hand the same pair out again never interleave."""
    from annotation.models import Membership
    from annotation.modes import mode_for

    Membership.objects.select_for_update(no_key=True).filter(project_id=batch.project_id, user=annotator).first()
    same_person = Assignment.objects.filter(pair_id=assignment.pair_id, annotator=annotator).exclude(
        pk=assignment.pk).exclude(status=Assignment.Status.EXPIRED)
    if (batch.pilot or not mode_for(batch.project).same_annotator_twice) and same_person.exists():
        raise Conflict("This set expired and the pair was served to you again; answer it in your current set.")
    if not batch.pilot:
        pair = Pair.objects.select_for_update(no_key=True).get(pk=assignment.pair_id)
        if pair.taken >= pair.planned:
            raise Conflict("This set expired and its pair was handed to someone else; fetch a new set.")
        pair.taken += 1
        if pair.first_annotator_id is None:
            pair.first_annotator_id = annotator.pk
        pair.save(update_fields=["taken", "first_annotator"])
    assignment.status = Assignment.Status.OPEN
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.OPEN)


@transaction.atomic
def judgement_undo_last(*, annotator, set_id: int, client_uuid: uuid.UUID | str | None = None) -> Judgement:
    """Undo the annotator's last live judgement in the set (kept with `undone_at`, not deleted).

    With `client_uuid` the undo names the judgement it takes back, which makes it safe to retry:
    a judgement already undone is returned as it is, and one that is not the set's last live
    judgement is refused (the page and the server disagree; the page reloads the set)."""
    annotation_set = AnnotationSet.objects.select_for_update(of=("self",), no_key=True).select_related("batch__project").filter(
        pk=set_id).first()
    if annotation_set is None:
        raise NotFound(f"No set {set_id}.")
    if annotation_set.annotator_id != annotator.pk:
        raise NotAllowed("This set is not yours.")
    named = None
    if client_uuid is not None:
        named = Judgement.objects.filter(client_uuid=_as_uuid(client_uuid), set=annotation_set).first()
        if named is None:
            raise NotFound("No judgement with this client_uuid in this set; nothing to undo.")
        if named.undone_at is not None:
            return named  # a retried undo
    if annotation_set.batch.status != Batch.Status.OPEN:
        raise Conflict("The batch is closed.")
    if annotation_set.status == AnnotationSet.Status.EXPIRED:
        raise Conflict("This set expired; its choices can no longer be undone.")
    newer = AnnotationSet.objects.filter(
        batch=annotation_set.batch, annotator=annotator, created__gt=annotation_set.created
    ).exists()
    if newer:
        raise Conflict("Only the choices of your current set can be undone.")
    last = Judgement.objects.filter(set=annotation_set, undone_at__isnull=True).order_by("-id").first()
    if last is None:
        raise Conflict("Nothing to undo in this set.")
    if named is not None and named.pk != last.pk:
        raise Conflict("Only your last choice in this set can be undone.")
    last.undone_at = timezone.now()
    last.save(update_fields=["undone_at"])
    Assignment.objects.filter(pk=last.assignment_id).update(status=Assignment.Status.OPEN)
    if annotation_set.status == AnnotationSet.Status.COMPLETED:
        # Reopened: give the annotator time to answer again even if the original deadline passed.
        timeout = dt.timedelta(minutes=annotation_set.batch.project.set_timeout_minutes)
        annotation_set.status = AnnotationSet.Status.OPEN
        annotation_set.completed_at = None
        annotation_set.expires_at = max(annotation_set.expires_at, timezone.now() + timeout)
        annotation_set.save(update_fields=["status", "completed_at", "expires_at"])
    return last
