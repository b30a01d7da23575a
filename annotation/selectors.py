"""Reads for the annotation app: access checks, project lists, progress."""
from __future__ import annotations

import uuid

from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Sum
from django.http import Http404
from django.utils import timezone

from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Membership, Pair, Project, Verse
from annotation.modes import waiting_q_by_project_mode
from core import rawsql
from core.roles import ANNOTATOR, LEAD, RESEARCHER, has_role


def user_can_manage(*, project: Project, user) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff:
        return True
    if not has_role(user, LEAD):
        return False
    return project.owner_id == user.pk or Membership.objects.filter(
        project=project, user=user, role=Membership.Role.LEAD).exists()


def user_can_view_results(*, project: Project, user) -> bool:
    """Leads of the project and researchers may read scores, judgements and agreement."""
    return user_can_manage(project=project, user=user) or has_role(user, RESEARCHER)


def user_can_annotate(*, project: Project, user) -> bool:
    if not getattr(user, "is_authenticated", False) or not has_role(user, ANNOTATOR):
        return False
    return Membership.objects.filter(project=project, user=user, role=Membership.Role.ANNOTATOR).exists()


_DENIED = {
    "manage": "Only the project's leads can do this.",
    "results": "Only the project's leads and researchers can see this.",
}


def project_get_for(*, pk: int, user, access: str = "view", denied: str | None = None) -> Project:
    """The one "fetch a project and check access" helper of pages and API views.

    ``access``: ``view`` (the user may see the project: 404 otherwise, so its existence is not revealed),
    ``manage`` (its leads and staff) or ``results`` (its leads and researchers: scores, agreement, exports).
    Raises Http404 for a missing project and PermissionDenied with ``denied`` (or a default message) for a
    refused one; Django answers 404/403 on pages and DRF on the API, with the message.
    """
    project = Project.objects.select_related("owner").filter(pk=pk).first()
    if project is None:
        raise Http404("No such project.")
    if access == "view":
        if not projects_for_user(user=user).filter(pk=pk).exists():
            raise Http404("No such project.")
        return project
    allowed = {"manage": user_can_manage, "results": user_can_view_results}[access]
    if not allowed(project=project, user=user):
        raise PermissionDenied(denied or _DENIED[access])
    return project


def managed_or_missing(queryset: QuerySet, *, pk: int, user, project_of=lambda obj: obj.project):
    """The object ``pk`` of ``queryset`` (a project, a batch, a verse) if ``user`` may manage its project; Http404
    otherwise, exactly as for a missing one: the lead's API for renaming, archiving, deleting and the study set-up
    never tells another user whether the object exists."""
    name = queryset.model._meta.verbose_name
    obj = queryset.filter(pk=pk).first() if rawsql.id_in_range(queryset.model, pk) else None
    if obj is None or not user_can_manage(project=project_of(obj), user=user):
        raise Http404(f"No such {name}.")
    return obj


def projects_for_user(*, user) -> QuerySet[Project]:
    """Projects a user may see: staff and researchers all, others those they are members of."""
    qs = Project.objects.select_related("owner")
    if user.is_staff or has_role(user, RESEARCHER):
        return qs
    return qs.filter(Q(owner=user) | Q(memberships__user=user)).distinct()


def projects_managed_by(*, user) -> QuerySet[Project]:
    """Projects the user may manage, in one query (staff: all)."""
    qs = Project.objects.select_related("owner").order_by("name")
    if user.is_staff:
        return qs
    if not has_role(user, LEAD):
        return qs.none()
    return qs.filter(Q(owner=user) | Q(memberships__user=user, memberships__role=Membership.Role.LEAD)).distinct()


def projects_to_annotate(*, user) -> QuerySet[Project]:
    """Projects the user annotates, archived ones left out (they serve no pairs)."""
    return Project.objects.filter(memberships__user=user, memberships__role=Membership.Role.ANNOTATOR,
                                  archived_at__isnull=True).distinct()


def verses_of(*, project: Project) -> QuerySet[Verse]:
    return Verse.objects.filter(project=project).order_by("id")


def verse_search(*, project: Project, q: str = "") -> QuerySet[Verse]:
    """The project's verses whose id or text contains ``q`` (case-insensitive; all when empty): ids that begin with
    it first, then the rest, each in import order. The verse list page and the batch form's verse picker."""
    verses = verses_of(project=project)
    q = q.strip()
    if not q:
        return verses
    from django.db.models import Case, IntegerField, Value, When

    return (verses.filter(Q(verse_id__icontains=q) | Q(text__icontains=q))
            .annotate(_starts=Case(When(verse_id__istartswith=q, then=Value(0)), default=Value(1),
                                   output_field=IntegerField()))
            .order_by("_starts", "id"))


def project_progress(*, project: Project, per_annotator: bool = True) -> dict:
    """Progress per batch and per annotator × batch, from live (not undone) judgements.

    Returns {"batches": [...], "annotators": [...]} with judged counts, pairs covered, overlap pairs
    judged twice, and sets with live judgements. Five queries whatever the project size; without
    `per_annotator` (the dashboard) four.
    """
    batches = list(Batch.objects.filter(project=project).select_related("reference").order_by("id"))
    batch_ids = [b.pk for b in batches]  # by id: the index (batch, undone_at, pair) is read as ranges
    live = Judgement.objects.filter(batch_id__in=batch_ids, undone_at__isnull=True,
                                    pair__attention_answer__isnull=True)  # attention checks are not progress
    per_batch = {row["batch"]: row for row in live.values("batch").annotate(
        judgements=Count("id"), pairs_covered=Count("pair", distinct=True))}
    planned_sum = dict(Pair.objects.filter(batch_id__in=batch_ids, attention_answer__isnull=True).values("batch").annotate(
        planned=Sum("planned")).values_list("batch", "planned"))
    annotator_rows = list(
        live.values("batch", "annotator__username").annotate(judgements=Count("id"), sets=Count("set", distinct=True))
        .order_by("annotator__username", "batch")
    ) if per_annotator else []
    n_annotators = Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR).count()
    batch_rows = []
    for batch in batches:
        done = per_batch.get(batch.pk, {})
        planned = batch.n_pairs * n_annotators if batch.pilot else planned_sum.get(batch.pk, 0)
        covered = done.get("pairs_covered", 0)
        batch_rows.append({
            "id": batch.pk, "name": batch.name, "reference_id": batch.reference.verse_id,
            "reference_text": batch.reference.text, "pilot": batch.pilot, "status": batch.status,
            "n_candidates": batch.n_candidates, "n_pairs": batch.n_pairs, "judgements": done.get("judgements", 0),
            "pairs_covered": covered, "pairs_progress": covered / batch.n_pairs if batch.n_pairs else 0.0,
            "planned_judgements": planned,
        })
    return {"batches": batch_rows, "annotators": annotator_rows, "n_annotators": n_annotators}


def _progress_sql() -> tuple[str, str]:
    """The annotator page's two progress figures as scalar subqueries (params: user, batch; then batch)."""
    q = connection.ops.quote_name
    live = (f"FROM {q(Judgement._meta.db_table)} j JOIN {q(Pair._meta.db_table)} p ON p.id = j.pair_id "
            f"WHERE j.batch_id = %s AND j.undone_at IS NULL AND p.attention_answer_id IS NULL")
    return (f"(SELECT COALESCE(SUM(CASE WHEN j.annotator_id = %s THEN 1 ELSE 0 END), 0) {live})",
            f"(SELECT COUNT(DISTINCT j.pair_id) {live})")


def _progress(batch: Batch, covered, mine) -> dict:
    total_for_me = batch.n_pairs if batch.pilot else None
    return {"pairs": batch.n_pairs, "pairs_covered": covered, "my_judgements": int(mine), "my_total": total_for_me}


def batch_progress_for(*, batch: Batch, user) -> dict:
    """What the annotator page shows: this annotator's count and the batch's coverage (live judgements,
    attention checks left out). Plain SQL, one statement: it runs with every set served."""
    mine, covered = _progress_sql()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {covered}, {mine}", [batch.pk, user.pk, batch.pk])
        covered, mine = cursor.fetchone()
    return _progress(batch, covered, mine)


def work_left_for(*, user, batches: list[Batch]) -> dict[int, dict]:
    """Per batch id, what is left (the annotator's home): ``{"batch": pairs of the batch no one has judged yet
    (attention checks left out; 0 once the batch is closed), "you": judgements `user` may still give there: the
    unanswered pairs of their open set, plus in a pilot batch the pairs they have not seen, elsewhere the pairs
    never served and those waiting for a second judgement they may give (shared with the other annotators: at
    most this many)}``. Mirrors the scheduler's rules without serving anything; five queries."""
    out = {b.pk: {"batch": 0, "you": 0} for b in batches}
    open_ids = [b.pk for b in batches if b.status == Batch.Status.OPEN]
    if not open_ids:
        return out
    judged = dict(Judgement.objects.filter(batch_id__in=open_ids, undone_at__isnull=True,
                                           pair__attention_answer__isnull=True)
                  .values("batch").annotate(n=Count("pair", distinct=True)).values_list("batch", "n"))
    mine = dict(Assignment.objects.filter(set__batch_id__in=open_ids, set__annotator=user, status=Assignment.Status.OPEN,
                                          set__status=AnnotationSet.Status.OPEN)
                .values("set__batch").annotate(n=Count("id")).values_list("set__batch", "n"))
    real = Pair.objects.filter(attention_answer__isnull=True)
    pilots = [b.pk for b in batches if b.pk in open_ids and b.pilot]
    regular = [b.pk for b in batches if b.pk in open_ids and not b.pilot]
    more: dict[int, int] = {}
    if pilots:
        seen = Assignment.objects.filter(annotator=user, pair__batch_id__in=pilots).exclude(
            status=Assignment.Status.EXPIRED)
        more.update(real.filter(batch_id__in=pilots).exclude(pk__in=seen.values("pair_id"))
                    .values("batch").annotate(n=Count("id")).values_list("batch", "n"))
    if regular:
        waiting = Q(taken__gte=1, taken__lt=F("planned")) & waiting_q_by_project_mode(user=user, batch_ids=regular)
        more.update(real.filter(batch_id__in=regular).filter(Q(taken=0) | waiting)
                    .values("batch").annotate(n=Count("id")).values_list("batch", "n"))
    for batch in batches:
        if batch.pk in open_ids:
            out[batch.pk] = {"batch": max(batch.n_pairs - judged.get(batch.pk, 0), 0),
                             "you": mine.get(batch.pk, 0) + more.get(batch.pk, 0)}
    return out


def batches_with_work_for(*, user, batches: list[Batch]) -> set[int]:
    """Ids of the open batches where `user` can still be served pairs (`work_left_for`), or where a set past its
    deadline is about to be released."""
    left = work_left_for(user=user, batches=batches)
    open_ids = [b.pk for b in batches if b.status == Batch.Status.OPEN]
    expired = AnnotationSet.objects.filter(batch_id__in=open_ids, status=AnnotationSet.Status.OPEN,
                                           expires_at__lt=timezone.now()).values_list("batch_id", flat=True)
    return {pk for pk, row in left.items() if row["you"]} | (set(expired) if open_ids else set())


def set_items(*, annotation_set: AnnotationSet) -> list[dict]:
    """The set's presentations in position order (expired ones left out), as the annotator page shows them:
    both verses, this set's live choice and its client UUID (None when unjudged), and whether the pair holds
    a live judgement from another set (`covered_elsewhere`: judging it adds nothing to the batch's coverage).

    One plain-SQL statement (the assignments, their two verses, the live judgement of each, an EXISTS for the
    others), where the ORM took two queries and more CPU than the rest of serving a set."""
    return _items(_set_rows(annotation_set, extra="", extra_params=[]))


def set_items_and_progress(*, annotation_set: AnnotationSet, batch: Batch, user) -> tuple[list[dict], dict]:
    """`set_items` and `batch_progress_for` in one statement: the progress figures are uncorrelated scalar
    subqueries of the items' statement, computed once (both databases evaluate such a subquery once per
    statement). A set with no item left to show falls back to `batch_progress_for`."""
    mine, covered = _progress_sql()
    rows = _set_rows(annotation_set, extra=f", {covered}, {mine}", extra_params=[batch.pk, user.pk, batch.pk])
    if not rows:
        return [], batch_progress_for(batch=batch, user=user)
    return _items(rows), _progress(batch, rows[0][15], rows[0][16])


def _set_rows(annotation_set: AnnotationSet, *, extra: str, extra_params: list) -> list[tuple]:
    q = connection.ops.quote_name
    assignment, verse, judgement = (q(m._meta.db_table) for m in (Assignment, Verse, Judgement))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.id, a.pair_id, a.position, a.status, l.id, l.verse_id, l.text, l.translation, "
            f"r.id, r.verse_id, r.text, r.translation, j.chosen_id, j.client_uuid, "
            f"EXISTS (SELECT 1 FROM {judgement} o WHERE o.pair_id = a.pair_id AND o.undone_at IS NULL "
            f"AND o.set_id <> a.set_id){extra} "
            f"FROM {assignment} a JOIN {verse} l ON l.id = a.left_id JOIN {verse} r ON r.id = a.right_id "
            f"LEFT JOIN {judgement} j ON j.assignment_id = a.id AND j.set_id = a.set_id AND j.undone_at IS NULL "
            f"WHERE a.set_id = %s AND a.status <> %s ORDER BY a.position",
            [*extra_params, annotation_set.pk, Assignment.Status.EXPIRED.value])
        return cursor.fetchall()


def _items(rows: list[tuple]) -> list[dict]:
    return [{"assignment_id": row[0], "pair_id": row[1], "position": row[2], "status": row[3],
             "left": {"id": row[4], "verse_id": row[5], "text": row[6], "translation": row[7]},
             "right": {"id": row[8], "verse_id": row[9], "text": row[10], "translation": row[11]},
             "chosen": row[12], "client_uuid": None if row[13] is None else str(uuid.UUID(str(row[13]))),
             "covered_elsewhere": bool(row[14])}
            for row in rows]


def judgements_of(*, project: Project) -> QuerySet[Judgement]:
    return (
        Judgement.objects.filter(batch__project=project, undone_at__isnull=True)
        .select_related("annotator", "chosen", "left", "pair__verse_a", "pair__verse_b", "batch__reference")
        .order_by("id")
    )


def annotator_batches(*, user) -> list[dict]:
    """The batches ``user`` may annotate, per project, with the user's own live judgement counts."""
    mine = dict(Judgement.objects.filter(annotator=user, undone_at__isnull=True)
                .values("batch").annotate(n=Count("id")).values_list("batch", "n"))
    return [{"project": project.name, "batch_id": batch.pk, "batch": batch.name, "status": batch.status,
             "n_pairs": batch.n_pairs, "my_judgements": mine.get(batch.pk, 0)}
            for project in projects_to_annotate(user=user).prefetch_related("batches")
            for batch in project.batches.all()]
