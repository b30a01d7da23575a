"""Recording judgements: idempotent submit, undo of the last choice in a set."""
from __future__ import annotations

import datetime as dt
import functools
import uuid

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Pair, Project
from annotation.services.errors import AnnotationError, Conflict, NotAllowed, NotFound
from annotation.services.scheduling import require_accepting
from core import rawsql


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

    The usual path is three SQL statements including authentication on PostgreSQL (the token with its user
    and roles, the locks, one statement that inserts and marks the assignment done and the set completed when
    nothing in it is open), five on SQLite: the UUID is looked up only when the insert says it is taken
    (unique constraint) or the pair is already judged (a retry).
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


# The columns the submit reads under its locks: the assignment, its set, the set's batch, the pair, and whether the
# batch's project is archived or may have a study step on (then the full check runs on the ORM objects: rare).
_LOCKED = ("a.id", "a.status", "a.annotator_id", "a.pair_id", "a.left_id", "a.set_id", "s.status", "s.batch_id",
           "b.status", "b.name", "p.verse_a_id", "p.verse_b_id", "pr.archived_at", "pr.training_on", "pr.check_on")


@functools.cache
def _lock_sql() -> str:
    """One statement locks the set, then the assignment (PostgreSQL takes the row locks in the order of
    FOR NO KEY UPDATE OF (set, assignment), the order undo and the release of expired sets use), and reads
    what the checks need. Tables are named, not aliased, so the lock clause names them."""
    q = connection.ops.quote_name
    a, s, b, p, pr = (q(m._meta.db_table) for m in (Assignment, AnnotationSet, Batch, Pair, Project))
    alias = {"a": a, "s": s, "b": b, "p": p, "pr": pr}
    columns = ", ".join(f"{alias[c.split('.')[0]]}.{q(c.split('.')[1])}" for c in _LOCKED)
    consent = f"CASE WHEN {pr}.{q('consent_text')} = '' THEN 0 ELSE 1 END"  # a consent step may be on
    sql = (f"SELECT {columns}, {consent} FROM {a} JOIN {s} ON {s}.{q('id')} = {a}.{q('set_id')} "
           f"JOIN {b} ON {b}.{q('id')} = {s}.{q('batch_id')} JOIN {p} ON {p}.{q('id')} = {a}.{q('pair_id')} "
           f"JOIN {pr} ON {pr}.{q('id')} = {b}.{q('project_id')} WHERE {a}.{q('id')} = %s")
    features = connection.features
    if features.has_select_for_update_of:
        sql += f" FOR {'NO KEY UPDATE' if features.has_select_for_no_key_update else 'UPDATE'} OF {s}, {a}"
    return sql


@transaction.atomic
def _submit(*, annotator, assignment_id: int, chosen_verse_id: int, client_uuid: uuid.UUID, response_ms: int | None,
            pair_id: int | None) -> tuple[Judgement, bool]:
    row = None
    if rawsql.id_in_range(Assignment, assignment_id):
        with connection.cursor() as cursor:
            cursor.execute(_lock_sql(), [assignment_id])
            row = cursor.fetchone()
    if row is None:
        raise NotFound(f"No assignment {assignment_id}.")
    (a_id, a_status, a_annotator, a_pair, a_left, set_id, set_status, batch_id, batch_status, batch_name, verse_a,
     verse_b, archived_at, training_on, check_on, consent_on) = row
    if pair_id is not None and pair_id != a_pair:
        raise Conflict(f"This choice was made on pair {pair_id}, but assignment {a_id} shows pair "
                       f"{a_pair}; nothing was stored.")
    if a_status == Assignment.Status.DONE:
        existing = Judgement.objects.filter(client_uuid=client_uuid).first()
        if existing is not None:
            return _replay(existing, annotator=annotator, assignment_id=a_id, chosen_verse_id=chosen_verse_id)
    if a_annotator != annotator.pk:
        raise NotAllowed("This pair is not assigned to you.")
    # A batch that closed (its stop rule held, or its lead closed it) still stores the answers to pairs it had
    # served and not taken back (an open assignment), marked `after_close`: nobody's work is lost at a close. A
    # released pair (expired set) is not served any more and is refused.
    after_close = batch_status != Batch.Status.OPEN
    if after_close and a_status != Assignment.Status.OPEN:
        raise Conflict(f"The batch {batch_name!r} is complete; judgements are no longer accepted.")
    if archived_at is not None or training_on or check_on or consent_on:
        # Archived, or a study step the lead may have turned on after this set was served: nothing is counted
        # from an annotator who may not be served pairs now.
        require_accepting(Batch.objects.select_related("project").get(pk=batch_id), annotator,
                          doing="takes no more judgements; nothing was stored", served=after_close)
    if chosen_verse_id not in (verse_a, verse_b):
        raise AnnotationError("The chosen verse is not one of the two candidates of this pair.")
    if a_status == Assignment.Status.DONE:
        raise Conflict("This pair is already judged in this set; undo it first to change the choice.")
    if a_status == Assignment.Status.EXPIRED:  # rare: the ORM objects, under the locks already held
        assignment = Assignment.objects.select_related("set__batch__project").get(pk=a_id)
        _retake_expired(assignment, assignment.set.batch, annotator)
    judgement = Judgement(
        assignment_id=a_id, annotator_id=annotator.pk, pair_id=a_pair, batch_id=batch_id, set_id=set_id,
        chosen_id=chosen_verse_id, left_id=a_left, chose_left=chosen_verse_id == a_left, response_ms=response_ms,
        client_uuid=client_uuid, created=timezone.now(), undone_at=None, after_close=after_close)
    judgement.pk = _record(judgement, complete_set=set_status == AnnotationSet.Status.OPEN)
    return judgement, True


_JUDGEMENT_COLUMNS = ("assignment_id", "annotator_id", "pair_id", "batch_id", "set_id", "chosen_id", "left_id",
                      "chose_left", "response_ms", "client_uuid", "created", "after_close")


@functools.cache
def _record_sql() -> dict[str, str]:
    quote = connection.ops.quote_name
    judgements = quote(Judgement._meta.db_table)
    assignments, sets = quote(Assignment._meta.db_table), quote(AnnotationSet._meta.db_table)
    insert = (f"INSERT INTO {judgements} ({', '.join(quote(c) for c in _JUDGEMENT_COLUMNS)}) "
              f"VALUES ({', '.join(['%s'] * len(_JUDGEMENT_COLUMNS))})")
    done = f"UPDATE {assignments} SET status = %s WHERE id = %s"
    complete = (f"UPDATE {sets} SET status = %s, completed_at = %s WHERE id = %s AND status = %s AND NOT EXISTS "
                f"(SELECT 1 FROM {assignments} WHERE set_id = %s AND status = %s AND id <> %s)")
    return {"insert": insert, "done": done, "complete": complete,
            "one": f"WITH j AS ({insert} RETURNING id), d AS ({done}) SELECT id FROM j",
            "one_complete": f"WITH j AS ({insert} RETURNING id), d AS ({done}), c AS ({complete}) SELECT id FROM j"}


def _record(judgement: Judgement, *, complete_set: bool) -> int:
    """Insert the judgement, mark its assignment done and, with `complete_set`, complete the set when no
    other assignment in it is open (read under the set's row lock, which every writer of the set's
    assignments takes first). Returns the judgement's id.

    On PostgreSQL one statement (the insert and the two updates as data-modifying CTEs: one round trip,
    all or nothing like the rest of the transaction; the NOT EXISTS sees the assignments before this
    one's update, hence `id <> assignment`), elsewhere three. Plain SQL on purpose: these fixed statements
    run on every choice, and building them through the ORM cost ten times the CPU of sending them."""
    sql = _record_sql()
    field = Judgement._meta.get_field
    created = field("created").get_db_prep_save(judgement.created, connection)
    values = [judgement.assignment_id, judgement.annotator_id, judgement.pair_id, judgement.batch_id,
              judgement.set_id, judgement.chosen_id, judgement.left_id, judgement.chose_left, judgement.response_ms,
              field("client_uuid").get_db_prep_save(judgement.client_uuid, connection), created, judgement.after_close]
    done_params = [Assignment.Status.DONE.value, judgement.assignment_id]
    complete_params = [AnnotationSet.Status.COMPLETED.value, created, judgement.set_id,
                       AnnotationSet.Status.OPEN.value, judgement.set_id, Assignment.Status.OPEN.value,
                       judgement.assignment_id] if complete_set else []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(sql["one_complete" if complete_set else "one"], values + done_params + complete_params)
            return cursor.fetchone()[0]
        cursor.execute(sql["insert"], values)
        judgement_id = cursor.lastrowid
        cursor.execute(sql["done"], done_params)
        if complete_set:
            cursor.execute(sql["complete"], complete_params)
        return judgement_id


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
    require_accepting(annotation_set.batch, annotator, doing="takes no more changes; nothing was undone")
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
