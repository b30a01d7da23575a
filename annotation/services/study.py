"""A project's study set-up: consent, a training phase with feedback and a comprehension check, all optional.

An annotator of a project whose lead turned any step on gets no real pairs until every step that is on is done
(`require_study_done`, asked by the scheduler before it serves a set), in this order:

1. consent: the project's ``consent_text`` (empty: no such step); agreeing is stored with its time;
2. training (``training_on``): every training pair of the project once, each answer followed by whether it was
   right and the lead's explanation;
3. comprehension check (``check_on``): every check pair at once, passed when at least ``check_pass_share`` of them
   are right; ``MAX_CHECK_ATTEMPTS`` attempts, after which an annotator who has not passed gets no real pairs
   (the lead sees it on the dashboard and may allow new attempts).

The pairs are `StudyItem` rows: marked by the lead (verse ids, an explanation) or drawn from a batch's imported
gold scores (`study_items_from_gold`). Answers are `StudyAnswer` rows; `StudyProgress` holds one annotator's
standing.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import BatchCandidate, Project, StudyAnswer, StudyItem, StudyProgress, Verse
from annotation.services.errors import AnnotationError, NotAllowed, NotFound
from annotation.services.members import check_can_manage

MAX_CHECK_ATTEMPTS = 2
MAX_ITEMS_PER_KIND = 100
STEPS = ("consent", "training", "check")


def study_on(project: Project) -> bool:
    """Whether any step is on (no query: the project row holds it)."""
    return bool(project.consent_text.strip()) or project.training_on or project.check_on


# --- the lead's set-up ------------------------------------------------------------------------------

def settings_problems(project: Project, *, training_on: bool, check_on: bool, check_pass_share: float | None,
                      **_) -> dict[str, str]:
    """Field → why the study settings cannot be saved (empty when they can)."""
    problems = {}
    counts = {kind: project.study_items.filter(kind=kind).count() for kind in StudyItem.Kind.values}
    if training_on and not counts[StudyItem.Kind.TRAINING]:
        problems["training_on"] = "Add at least one training pair before turning training on."
    if check_on and not counts[StudyItem.Kind.CHECK]:
        problems["check_on"] = "Add at least one check pair before turning the comprehension check on."
    if check_pass_share is not None and not 0 < check_pass_share <= 1:
        problems["check_pass_share"] = "The share to pass must be above 0 and at most 1."
    return problems


@transaction.atomic
def study_settings_update(*, project: Project, actor, consent_text: str, training_on: bool, check_on: bool,
                          check_pass_share: float | None) -> Project:
    check_can_manage(project=project, user=actor)
    project = Project.objects.select_for_update().get(pk=project.pk)
    problems = settings_problems(project, training_on=training_on, check_on=check_on, check_pass_share=check_pass_share)
    if problems:
        raise AnnotationError("; ".join(f"{field}: {why}" for field, why in problems.items()))
    project.consent_text = consent_text.strip()
    project.training_on, project.check_on = training_on, check_on
    if check_pass_share is not None:
        project.check_pass_share = check_pass_share
    project.save(update_fields=["consent_text", "training_on", "check_on", "check_pass_share"])
    return project


def _check_room(project: Project, kind: str, n: int = 1) -> None:
    if kind not in StudyItem.Kind.values:
        raise AnnotationError(f"kind: {kind!r} is not one of {', '.join(StudyItem.Kind.values)}.")
    if project.study_items.filter(kind=kind).count() + n > MAX_ITEMS_PER_KIND:
        raise AnnotationError(f"A project holds at most {MAX_ITEMS_PER_KIND} {kind} pairs.")


@transaction.atomic
def study_item_add(*, project: Project, actor, kind: str, reference_id: str, answer_id: str, other_id: str,
                   explanation: str = "") -> StudyItem:
    """A known-answer pair marked by the lead: under ``reference_id``, ``answer_id`` is the more similar verse
    than ``other_id`` (verse ids of the project)."""
    check_can_manage(project=project, user=actor)
    _check_room(project, kind)
    ids = {"reference_id": reference_id, "answer_id": answer_id, "other_id": other_id}
    verses = {v.verse_id: v for v in Verse.objects.filter(project=project, verse_id__in=ids.values())}
    missing = [f"{field}: {value!r} is not a verse of the project" for field, value in ids.items() if value not in verses]
    if missing:
        raise NotFound("; ".join(missing) + ".")
    if len(set(ids.values())) < 3:
        raise AnnotationError("The reference, the answer and the other verse must be three different verses.")
    try:
        with transaction.atomic():
            return StudyItem.objects.create(project=project, kind=kind, reference=verses[reference_id],
                                            answer=verses[answer_id], other=verses[other_id],
                                            explanation=explanation.strip(), source=StudyItem.Source.MARKED)
    except IntegrityError:
        raise AnnotationError(f"This {kind} pair exists already.") from None


@transaction.atomic
def study_items_from_gold(*, project: Project, actor, kind: str, n: int, min_gap: float = 0.5) -> int:
    """Up to ``n`` pairs drawn from the batches' imported gold scores: in each batch, candidate pairs whose gold
    similarities to the reference differ by at least ``min_gap`` (largest gaps first, each candidate used once per
    draw), the higher-scored candidate the answer. Returns how many were added."""
    check_can_manage(project=project, user=actor)
    if not 1 <= n <= MAX_ITEMS_PER_KIND:
        raise AnnotationError(f"n: draw 1 to {MAX_ITEMS_PER_KIND} pairs.")
    _check_room(project, kind, 1)
    n = min(n, MAX_ITEMS_PER_KIND - project.study_items.filter(kind=kind).count())
    scored: dict[int, list[tuple[float, int]]] = {}
    references: dict[int, int] = {}
    for batch_id, reference, verse, gold in (BatchCandidate.objects.filter(batch__project=project, gold_score__isnull=False)
                                             .values_list("batch_id", "batch__reference_id", "verse_id", "gold_score")):
        scored.setdefault(batch_id, []).append((gold, verse))
        references[batch_id] = reference
    if not any(len(rows) >= 2 for rows in scored.values()):
        raise AnnotationError("No batch of this project has two or more candidates with imported gold scores.")
    existing = set(StudyItem.objects.filter(project=project).values_list("reference_id", "answer_id", "other_id"))
    drawn: list[StudyItem] = []
    for batch_id in sorted(scored):
        rows = sorted(scored[batch_id], reverse=True)
        used: set[int] = set()
        gaps = sorted(((hi[0] - lo[0], hi, lo) for i, hi in enumerate(rows) for lo in rows[i + 1:]
                       if hi[0] - lo[0] >= min_gap), key=lambda g: -g[0])
        for gap, (hi_gold, hi), (lo_gold, lo) in gaps:
            key = (references[batch_id], hi, lo)
            if len(drawn) >= n or hi in used or lo in used or key in existing or references[batch_id] in (hi, lo):
                continue
            used.update((hi, lo))
            existing.add(key)
            drawn.append(StudyItem(project=project, kind=kind, reference_id=key[0], answer_id=hi, other_id=lo,
                                   source=StudyItem.Source.GOLD,
                                   explanation=f"In the gold data the first verse scores {hi_gold:g} against the "
                                               f"reference, the second {lo_gold:g}."))
    if not drawn:
        raise AnnotationError(f"No new pair of gold scores differs by {min_gap:g} or more.")
    StudyItem.objects.bulk_create(drawn)
    return len(drawn)


@transaction.atomic
def study_item_delete(*, project: Project, actor, item_id: int) -> str:
    check_can_manage(project=project, user=actor)
    item = StudyItem.objects.filter(project=project, pk=item_id).first()
    if item is None:
        raise NotFound("No such study pair in this project.")
    step_on = project.training_on if item.kind == StudyItem.Kind.TRAINING else project.check_on
    if step_on and project.study_items.filter(kind=item.kind).count() == 1:
        raise AnnotationError(f"This is the last {item.kind} pair and the step is on: turn it off first.")
    item.delete()
    return f"The {item.kind} pair was removed; the answers annotators gave to it are removed with it."


def attempts_allowed(progress: StudyProgress) -> int:
    return MAX_CHECK_ATTEMPTS * (1 + progress.check_retries)


@transaction.atomic
def check_allow_retry(*, project: Project, actor, user_id: int) -> str:
    """Give an annotator who failed the comprehension check two new attempts (their past answers are kept)."""
    check_can_manage(project=project, user=actor)
    progress = StudyProgress.objects.select_for_update().filter(project=project, user_id=user_id).first()
    if progress is None or pending_step(project, progress) != "failed":
        raise AnnotationError("This annotator has not failed the comprehension check.")
    progress.check_retries += 1
    progress.save(update_fields=["check_retries"])
    return f"{progress.user.username} may take the comprehension check again ({MAX_CHECK_ATTEMPTS} attempts)."


# --- the annotator's steps --------------------------------------------------------------------------

def progress_for(project: Project, user, *, lock: bool = False) -> StudyProgress:
    rows = StudyProgress.objects.select_for_update() if lock else StudyProgress.objects
    progress = rows.filter(project=project, user=user).first()
    if progress is None:
        try:
            with transaction.atomic():
                progress = StudyProgress.objects.create(project=project, user=user)
        except IntegrityError:  # made at the same moment by another request
            progress = rows.get(project=project, user=user)
    return progress


def pending_step(project: Project, progress: StudyProgress | None) -> str | None:
    """The first step still to do ("consent", "training", "check"), "failed" after the last failed check
    attempt, or None when real pairs may be served."""
    if not study_on(project):
        return None
    if project.consent_text.strip() and (progress is None or progress.consented_at is None):
        return "consent"
    if project.training_on and (progress is None or progress.training_done_at is None):
        return "training"
    if project.check_on and (progress is None or progress.check_passed_at is None):
        if progress is not None and progress.check_attempts >= attempts_allowed(progress):
            return "failed"
        return "check"
    return None


FAILED_MESSAGE = ("You did not pass the comprehension check in {n} attempts, so this project gives you no real pairs. "
                  "The project's lead sees this on the dashboard and may allow new attempts.")


def require_study_done(project: Project, user, *, batch_id: int | None = None) -> None:
    """NotAllowed (403) unless every study step that is on is done: the server's check before real pairs. With
    ``batch_id`` the message names the study page's address."""
    if not study_on(project):
        return
    progress = StudyProgress.objects.filter(project=project, user=user).first()
    step = pending_step(project, progress)
    if step == "failed":
        raise NotAllowed(FAILED_MESSAGE.format(n=progress.check_attempts))
    if step is not None:
        where = f"/annotate/{batch_id}/study/" if batch_id is not None else "the project's study page"
        raise NotAllowed(f"Finish the study steps first (next: {step}) on {where}; real pairs come after them.")


@transaction.atomic
def consent_give(*, project: Project, user) -> StudyProgress:
    if not project.consent_text.strip():
        raise AnnotationError("This project asks for no consent.")
    progress = progress_for(project, user, lock=True)
    if progress.consented_at is None:
        progress.consented_at = timezone.now()
        progress.save(update_fields=["consented_at"])
    return progress


def training_next(project: Project, progress: StudyProgress) -> StudyItem | None:
    answered = StudyAnswer.objects.filter(progress=progress, attempt=0).values("item_id")
    return (project.study_items.filter(kind=StudyItem.Kind.TRAINING).exclude(pk__in=answered)
            .select_related("reference", "answer", "other").order_by("pk").first())


def _chosen_verse(item: StudyItem, chosen_pk: int) -> int:
    if chosen_pk not in (item.answer_id, item.other_id):
        raise AnnotationError("chosen: that verse is not one of the pair's two verses.")
    return chosen_pk


@transaction.atomic
def training_finish_if_done(*, project: Project, user) -> StudyProgress:
    """Close training when no training pair is left to answer (the lead may have removed the last ones)."""
    progress = progress_for(project, user, lock=True)
    if progress.training_done_at is None and training_next(project, progress) is None:
        progress.training_done_at = timezone.now()
        progress.save(update_fields=["training_done_at"])
    return progress


@transaction.atomic
def training_answer(*, project: Project, user, item_id: int, chosen_pk: int) -> StudyAnswer:
    """Store a training answer (a repeated one returns the first) and finish training after the last pair."""
    progress = progress_for(project, user, lock=True)
    if pending_step(project, progress) == "consent":
        raise NotAllowed("Give your consent first.")
    item = StudyItem.objects.filter(project=project, kind=StudyItem.Kind.TRAINING, pk=item_id).first()
    if item is None:
        raise NotFound("No such training pair in this project.")
    answer = StudyAnswer.objects.filter(progress=progress, item=item, attempt=0).first()
    if answer is None:
        chosen = _chosen_verse(item, chosen_pk)
        answer = StudyAnswer.objects.create(progress=progress, item=item, attempt=0, chosen_id=chosen,
                                            correct=chosen == item.answer_id)
    answers = StudyAnswer.objects.filter(progress=progress, attempt=0)
    progress.training_answered = answers.count()
    progress.training_correct = answers.filter(correct=True).count()
    if progress.training_done_at is None and training_next(project, progress) is None:
        progress.training_done_at = timezone.now()
    progress.save(update_fields=["training_answered", "training_correct", "training_done_at"])
    return answer


@transaction.atomic
def check_submit(*, project: Project, user, answers: dict[int, int]) -> dict:
    """Score one attempt at the comprehension check: ``answers`` maps every check pair's id to the chosen verse.
    Returns {"right", "n", "score", "passed", "attempts", "left" (attempts), "failed"}."""
    progress = progress_for(project, user, lock=True)
    step = pending_step(project, progress)
    if step == "failed":
        raise NotAllowed(FAILED_MESSAGE.format(n=progress.check_attempts))
    if step != "check":
        raise AnnotationError("There is no comprehension check for you to take now.")
    items = list(project.study_items.filter(kind=StudyItem.Kind.CHECK).order_by("pk"))
    missing = [str(k + 1) for k, item in enumerate(items) if item.pk not in answers]
    if missing:
        raise AnnotationError(f"Answer every pair: pair(s) {', '.join(missing)} have no answer; nothing was counted.")
    attempt = progress.check_attempts + 1
    rows = [StudyAnswer(progress=progress, item=item, attempt=attempt, chosen_id=_chosen_verse(item, answers[item.pk]),
                        correct=answers[item.pk] == item.answer_id) for item in items]
    StudyAnswer.objects.bulk_create(rows)
    right = sum(row.correct for row in rows)
    score = right / len(items)
    passed = score >= project.check_pass_share - 1e-9
    progress.check_attempts, progress.check_last_score = attempt, score
    if passed:
        progress.check_passed_at = timezone.now()
    progress.save(update_fields=["check_attempts", "check_last_score", "check_passed_at"])
    left = max(attempts_allowed(progress) - attempt, 0)
    return {"right": right, "n": len(items), "score": score, "passed": passed, "attempts": attempt, "left": left,
            "failed": not passed and left == 0}


# --- what the lead sees -----------------------------------------------------------------------------

STUDY_COLUMNS = ["consented_at", "training_correct", "training_answered", "check_attempts", "check_last_score",
                 "check_passed", "study_step"]


def study_rows(project: Project) -> dict[str, dict]:
    """Per annotator with a study record: the dashboard's study columns, keyed by username."""
    rows = {}
    for progress in StudyProgress.objects.filter(project=project).select_related("user").order_by("user__username"):
        step = pending_step(project, progress)
        rows[progress.user.username] = {
            "user_id": progress.user_id, "consented_at": progress.consented_at,
            "training_correct": progress.training_correct, "training_answered": progress.training_answered,
            "check_attempts": progress.check_attempts, "check_last_score": progress.check_last_score,
            "check_passed": progress.check_passed_at is not None, "study_step": step or "done",
            "failed": step == "failed"}
    return rows
