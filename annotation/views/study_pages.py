"""The study set-up's pages: the annotator's steps before real pairs (consent, training with feedback, the
comprehension check) and the lead's card that configures them. The rules are in `annotation/services/study.py`."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.forms import StudyGoldForm, StudyItemForm, StudySettingsForm
from annotation.models import Batch, StudyAnswer, StudyItem, StudyProgress
from annotation.services import study as study_services
from annotation.services.errors import AnnotationError
from annotation.views.access import managed_project
from annotation.views.projects import lead_action, project_page
from core.page_actions import page_action, say_done

# --- the annotator's steps -------------------------------------------------------------------------


def _annotator_batch(request, batch_id: int) -> Batch:
    batch = get_object_or_404(Batch.objects.select_related("project", "reference"), pk=batch_id)
    if not selectors.user_can_annotate(project=batch.project, user=request.user):
        raise PermissionDenied("You are not an annotator of this project.")
    return batch


def _left_first(item: StudyItem, user) -> bool:
    """The side the answer is shown on: fixed per annotator and pair (a reload shows the same screen), and not
    always the same side."""
    return (item.pk * 7919 + user.pk) % 2 == 0


def _sides(item: StudyItem, user) -> list:
    return [item.answer, item.other] if _left_first(item, user) else [item.other, item.answer]


@login_required
def study(request, batch_id: int):
    """The annotator's study page: the step they are at, or the annotation page when every step is done."""
    return _study_page(request, _annotator_batch(request, batch_id))


def _study_page(request, batch: Batch, *, check_error: str | None = None, status: int = 200):
    """The study page; ``check_error`` (with ``status``) says why a comprehension-check attempt was not counted."""
    project = batch.project
    progress = StudyProgress.objects.filter(project=project, user=request.user).first()
    step = study_services.pending_step(project, progress)
    feedback = None
    raw = request.GET.get("feedback", "")
    if progress is not None and _id(raw) is not None:
        feedback = (StudyAnswer.objects.filter(progress=progress, pk=_id(raw), attempt=0)
                    .select_related("item__answer", "item__other", "item__reference", "chosen").first())
    if step is None and feedback is None:
        return redirect("annotation:annotate", batch_id=batch.pk)
    item = None
    check_items = []
    if step == "training" and feedback is None:
        item = study_services.training_next(project, progress or study_services.progress_for(project, request.user))
        if item is None:  # nothing left to answer (pairs removed meanwhile): training is done
            study_services.training_finish_if_done(project=project, user=request.user)
            return redirect(_study_url(batch))
    if step == "check":
        check_items = [{"item": i, "sides": _sides(i, request.user)} for i in
                       project.study_items.filter(kind=StudyItem.Kind.CHECK).select_related("reference", "answer",
                                                                                                "other").order_by("pk")]
    steps = [s for s, on in zip(study_services.STEPS, (bool(project.consent_text.strip()), project.training_on,
                                                       project.check_on)) if on]
    context = {
        "batch": batch, "project": project, "progress": progress, "step": step, "steps": steps,
        "feedback": feedback, "item": item, "sides": _sides(item, request.user) if item else [],
        "check_items": check_items, "attempts_allowed": study_services.attempts_allowed(progress) if progress else
        study_services.MAX_CHECK_ATTEMPTS, "check_error": check_error,
        "n_training": project.study_items.filter(kind=StudyItem.Kind.TRAINING).count(),
        "failed_message": study_services.FAILED_MESSAGE.format(
            n=progress.check_attempts if progress else study_services.MAX_CHECK_ATTEMPTS),
        "pass_percent": round(project.check_pass_share * 100),
    }
    return render(request, "annotation/study.html", context, status=status)


def _study_url(batch: Batch, **query) -> str:
    url = reverse("annotation:study", args=[batch.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


@login_required
@require_POST
def study_consent(request, batch_id: int):
    batch = _annotator_batch(request, batch_id)
    url = _study_url(batch)
    return page_action(request, lambda: study_services.consent_give(project=batch.project, user=request.user),
                       done=lambda _: redirect(url), back=url, errors=AnnotationError)


def _id(text: str) -> int | None:
    """An id written in ASCII digits ("²".isdigit() is True), else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def _posted_int(request, name: str) -> int | None:
    return _id(request.POST.get(name, ""))


@login_required
@require_POST
def study_training(request, batch_id: int):
    batch = _annotator_batch(request, batch_id)
    item_id, chosen = _posted_int(request, "item"), _posted_int(request, "chosen")
    if item_id is None or chosen is None:
        messages.error(request, "Choose one of the two verses.")
        return redirect(_study_url(batch))
    return page_action(request, lambda: study_services.training_answer(project=batch.project, user=request.user,
                                                                       item_id=item_id, chosen_pk=chosen),
                       done=lambda answer: redirect(_study_url(batch, feedback=answer.pk)), back=_study_url(batch),
                       errors=AnnotationError)


@login_required
@require_POST
def study_check(request, batch_id: int):
    batch = _annotator_batch(request, batch_id)
    answers = {}
    for key in request.POST:
        if key.startswith("item-"):
            item_id, chosen = _id(key[5:]), _posted_int(request, key)
            if item_id is not None and chosen is not None:
                answers[item_id] = chosen

    def checked(result):
        said = f"{result['right']} of {result['n']} right."
        if result["passed"]:
            messages.success(request, f"Comprehension check passed: {said} You can now annotate.")
            return redirect("annotation:annotate", batch_id=batch.pk)
        if not result["failed"]:
            left = result["left"]
            messages.error(request, f"Not passed: {said} You need {round(batch.project.check_pass_share * 100)} %. "
                                    f"Read the instructions again; you have "
                                    f"{'one more attempt' if left == 1 else f'{left} more attempts'}.")
        return redirect(_study_url(batch))

    return page_action(request, lambda: study_services.check_submit(project=batch.project, user=request.user,
                                                                    answers=answers),
                       done=checked, again=lambda exc: _study_page(request, batch, check_error=str(exc),
                                                                   status=exc.status), errors=AnnotationError)


# --- the lead's card --------------------------------------------------------------------------------

def _study_anchor(pk: int) -> str:
    return reverse("annotation:project", args=[pk]) + "#study"


@login_required
@require_POST
def study_settings(request, pk: int):
    project = managed_project(request, pk)
    form = StudySettingsForm(request.POST)
    if form.is_valid():  # the rules that need the project (pairs exist for a step turned on) become field errors
        for field, why in study_services.settings_problems(project, **form.cleaned_data).items():
            form.add_error(field, why)
    if form.errors:
        return project_page(request, project, status=400, study=form)
    return page_action(request, lambda: study_services.study_settings_update(project=project, actor=request.user,
                                                                             **form.cleaned_data),
                       done=say_done(request, _study_anchor(pk), "Study set-up saved."), back=_study_anchor(pk),
                       refused="Study set-up not saved", errors=AnnotationError)


def _study_action(request, pk: int, service, done: str, refused: str, form_class=None, form_name: str = "", **ids):
    """`lead_action` for a study service ``service(project=, actor=, **ids, **cleaned_data)``, back to the card."""
    return lead_action(request, pk, lambda project, **data: service(project=project, actor=request.user, **ids, **data),
                       done, refused, form_class, form_name, anchor="#study")


@login_required
@require_POST
def study_item_add(request, pk: int):
    return _study_action(request, pk, study_services.study_item_add, "The {result.kind} pair was added.",
                         "Pair not added", StudyItemForm, "study_item")


@login_required
@require_POST
def study_gold(request, pk: int):
    return _study_action(request, pk, study_services.study_items_from_gold, "{result} pair(s) drawn from the gold "
                         "scores.", "No pairs drawn", StudyGoldForm, "study_gold")


@login_required
@require_POST
def study_item_delete(request, pk: int, item_id: int):
    return _study_action(request, pk, study_services.study_item_delete, "{result}", "Not removed", item_id=item_id)


@login_required
@require_POST
def study_retry(request, pk: int, user_id: int):
    return _study_action(request, pk, study_services.check_allow_retry, "{result}", "Not changed", user_id=user_id)
