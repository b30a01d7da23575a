"""Recording judgements: idempotent submit, undo of the last choice in a set."""
from __future__ import annotations

import uuid

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Pair
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound


@transaction.atomic
def judgement_submit(
    *, annotator, assignment_id: int, chosen_verse_id: int, client_uuid: uuid.UUID | str, response_ms: int | None = None
) -> tuple[Judgement, bool]:
    """Store the annotator's choice for an assignment. Returns (judgement, created).

    A retry with the same `client_uuid` returns the stored judgement (created False) and stores
    nothing; the assignment row is locked first, so concurrent retries serialise.
    """
    try:
        client_uuid = uuid.UUID(str(client_uuid))
    except ValueError:
        raise AnnotationError("client_uuid is not a UUID.") from None
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("pair", "set", "set__batch")
        .filter(pk=assignment_id).first()
    )
    if assignment is None:
        raise NotFound(f"No assignment {assignment_id}.")
    existing = Judgement.objects.filter(client_uuid=client_uuid).first()
    if existing is not None:
        if existing.annotator_id != annotator.pk or existing.assignment_id != assignment.pk:
            raise Conflict("This client_uuid was already used for another judgement.")
        return existing, False
    if assignment.annotator_id != annotator.pk:
        raise NotAllowed("This pair is not assigned to you.")
    batch: Batch = assignment.set.batch
    if batch.status != Batch.Status.OPEN:
        raise Conflict(f"The batch {batch.name!r} is closed; judgements are no longer accepted.")
    pair: Pair = assignment.pair
    if chosen_verse_id not in (pair.verse_a_id, pair.verse_b_id):
        raise AnnotationError("The chosen verse is not one of the two candidates of this pair.")
    if assignment.status == Assignment.Status.DONE:
        raise Conflict("This pair is already judged in this set; undo it first to change the choice.")
    if assignment.status == Assignment.Status.EXPIRED:
        _retake_expired(assignment)
    try:
        with transaction.atomic():
            judgement = Judgement.objects.create(
                assignment=assignment, annotator=annotator, pair=pair, batch=batch, set=assignment.set,
                chosen_id=chosen_verse_id, left_id=assignment.left_id, chose_left=chosen_verse_id == assignment.left_id,
                response_ms=response_ms, client_uuid=client_uuid,
            )
    except IntegrityError:
        existing = Judgement.objects.filter(client_uuid=client_uuid, annotator=annotator).first()
        if existing is not None:
            return existing, False
        raise Conflict("This pair was judged concurrently; reload the set.") from None
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DONE)
    annotation_set = assignment.set
    if not Assignment.objects.filter(set=annotation_set, status=Assignment.Status.OPEN).exists():
        AnnotationSet.objects.filter(pk=annotation_set.pk).update(
            status=AnnotationSet.Status.COMPLETED, completed_at=timezone.now()
        )
    return judgement, True


def _retake_expired(assignment: Assignment) -> None:
    """A late answer on a released assignment is kept if the pair still has room for it."""
    batch = assignment.set.batch
    if not batch.pilot:
        retaken = Pair.objects.filter(pk=assignment.pair_id, taken__lt=F("planned")).update(taken=F("taken") + 1)
        if not retaken:
            raise Conflict("This set expired and its pair was handed to someone else; fetch a new set.")
    assignment.status = Assignment.Status.OPEN
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.OPEN)


@transaction.atomic
def judgement_undo_last(*, annotator, set_id: int) -> Judgement:
    """Undo the annotator's last live judgement in the set (kept with `undone_at`, not deleted)."""
    annotation_set = AnnotationSet.objects.select_for_update().select_related("batch").filter(pk=set_id).first()
    if annotation_set is None:
        raise NotFound(f"No set {set_id}.")
    if annotation_set.annotator_id != annotator.pk:
        raise NotAllowed("This set is not yours.")
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
    last.undone_at = timezone.now()
    last.save(update_fields=["undone_at"])
    Assignment.objects.filter(pk=last.assignment_id).update(status=Assignment.Status.OPEN)
    if annotation_set.status == AnnotationSet.Status.COMPLETED:
        annotation_set.status = AnnotationSet.Status.OPEN
        annotation_set.completed_at = None
        annotation_set.save(update_fields=["status", "completed_at"])
    return last
