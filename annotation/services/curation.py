"""A lead's housekeeping without the admin site: rename, archive and delete projects, rename and delete verses,
and what a batch deletion removes. Each deletion has a plan (`*_plan`: what goes, what is kept, or why it is
refused) that the confirmation page shows and the deletion itself follows. Judgements are never deleted: whatever
holds one is refused deletion (archive or close it instead)."""
from __future__ import annotations

import re

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import (
    AnnotationSet,
    Batch,
    BatchCandidate,
    Invitation,
    Judgement,
    Membership,
    Pair,
    Project,
    StudyItem,
    StudyProgress,
    Verse,
)
from annotation.services.errors import AnnotationError, Conflict
from annotation.services.members import check_can_manage
from core.text_checks import control_character_message

_SLUG = re.compile(r"[-a-zA-Z0-9_]+")
_VERSE_ID_MAX = Verse._meta.get_field("verse_id").max_length


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


# --- projects -------------------------------------------------------------------------------------

@transaction.atomic
def project_name_problem(name: str) -> str | None:
    """What is wrong with `name` (stripped) as a project's name, or None: the one rule the rename service, the
    project PATCH's field check and the page share (uniqueness is checked by the service, 409)."""
    name = name.strip()
    if not _SLUG.fullmatch(name) or len(name) > 100:
        return "1 to 100 letters, digits, '-' or '_'."
    return None


def project_rename(*, project: Project, actor, name: str, title: str = "") -> Project:
    """A new name (a slug, unique) and title. Everything follows the project: its pages and API use its id;
    `export_scores --project` and `import_verses --project` take the new name. The API's POST `…/rename/` and PATCH
    on the project both call it."""
    check_can_manage(project=project, user=actor)
    name, title = name.strip(), title.strip()
    problem = project_name_problem(name)
    if problem:
        raise AnnotationError(f"name: {problem}")
    if len(title) > 200:
        raise AnnotationError("title: at most 200 characters.")
    if Project.objects.filter(name=name).exclude(pk=project.pk).exists():
        raise Conflict(f"name: a project named {name!r} exists already.")
    project.name, project.title = name, title or name
    project.save(update_fields=["name", "title"])
    return project


def _project_counts(project: Project) -> dict[str, int]:
    return {"batches": Batch.objects.filter(project=project).count(),
            "verses": Verse.objects.filter(project=project).count(),
            "judgements": Judgement.objects.filter(batch__project=project).count(),
            "members": Membership.objects.filter(project=project).count()}


def project_archive_plan(project: Project) -> dict:
    n = _project_counts(project)
    if project.archived_at:
        return {"goes": [], "stays": ["Everything: annotators get pairs again from its open batches."]}
    return {"goes": ["Annotators get no more pairs from any of its batches, and it leaves their list of batches.",
                     "No new set is served, and choices made from now on in a set already on someone's screen are "
                     "refused (their page says so); every judgement made before is kept."],
            "stays": [f"All of it: {_count(n['batches'], 'batch')}, {_count(n['verses'], 'verse')}, "
                      f"{_count(n['judgements'], 'judgement')}, {_count(n['members'], 'member')}.",
                      "The dashboard, the scores, judgements and agreement exports (pages, API, export_scores).",
                      "You can unarchive it at any time from its page."]}


@transaction.atomic
def project_archive(*, project: Project, actor, archived: bool = True) -> str:
    check_can_manage(project=project, user=actor)
    project.archived_at = timezone.now() if archived else None
    project.save(update_fields=["archived_at"])
    return (f"Project {project.name} archived: no pairs are served; everything is kept and exports still work."
            if archived else f"Project {project.name} is active again.")


def project_delete_plan(project: Project) -> dict:
    n = _project_counts(project)
    plan = {"goes": [f"The project and {_count(n['batches'], 'batch')} with their pairs and unanswered sets.",
                     f"{_count(n['verses'], 'verse')}, its study set-up and answers, invitation links and "
                     f"{_count(n['members'], 'membership')} (the accounts stay)."],
            "stays": ["User accounts.", "Job records of its analytics and planning runs (on /jobs/).",
                      "Gold similarity sets already made from its batches (benchmarks keep their own copy)."]}
    if n["judgements"]:
        plan["refused"] = (f"it holds {_count(n['judgements'], 'judgement')} (undone ones included), which are never "
                           "deleted. Archive it instead: annotators get no pairs, everything is kept and exports "
                           "still work.")
    return plan


@transaction.atomic
def project_delete(*, project: Project, actor) -> str:
    """Delete a project that holds no judgement, with everything in it (see `project_delete_plan`)."""
    check_can_manage(project=project, user=actor)
    project = Project.objects.select_for_update().get(pk=project.pk)
    refused = project_delete_plan(project).get("refused")
    if refused:
        raise Conflict(f"Project {project.name!r} not deleted: {refused}")
    name = project.name
    # Verses are protected while pairs, batches and study rows point at them: those go first.
    for batch in Batch.objects.filter(project=project):
        AnnotationSet.objects.filter(batch=batch).delete()
        Pair.objects.filter(batch=batch).delete()
        BatchCandidate.objects.filter(batch=batch).delete()
        batch.delete()
    StudyProgress.objects.filter(project=project).delete()
    StudyItem.objects.filter(project=project).delete()
    Invitation.objects.filter(project=project).delete()
    project.delete()
    return f"Project {name!r} deleted."


# --- verses ---------------------------------------------------------------------------------------

def _verse_uses(verse: Verse) -> dict[str, int]:
    return {
        "reference of": Batch.objects.filter(reference=verse).count(),
        "candidate in": BatchCandidate.objects.filter(verse=verse).count(),
        "attention checks": Pair.objects.filter(Q(verse_a=verse) | Q(verse_b=verse) | Q(attention_answer=verse),
                                                attention_answer__isnull=False).count(),
        "study pairs": StudyItem.objects.filter(Q(reference=verse) | Q(answer=verse) | Q(other=verse)).count(),
    }


@transaction.atomic
def verse_rename(*, verse: Verse, actor, verse_id: str) -> Verse:
    """A new id for a verse (unique in its project). Batches, judgements and scores follow the verse: the exports
    name it by its new id from now on."""
    check_can_manage(project=verse.project, user=actor)
    verse_id = verse_id.strip()
    if not verse_id or len(verse_id) > _VERSE_ID_MAX:
        raise AnnotationError(f"verse_id: 1 to {_VERSE_ID_MAX} characters.")
    problem = control_character_message(verse_id)
    if problem or any(char in verse_id for char in "\t\r\n"):
        raise AnnotationError(f"verse_id: {problem or 'a verse id is one line without tabs.'}")
    if Verse.objects.filter(project_id=verse.project_id, verse_id=verse_id).exclude(pk=verse.pk).exists():
        raise Conflict(f"verse_id: the project has a verse {verse_id!r} already.")
    verse.verse_id = verse_id
    verse.save(update_fields=["verse_id"])
    return verse


def verse_delete_plan(verse: Verse) -> dict:
    uses = {what: n for what, n in _verse_uses(verse).items() if n}
    plan = {"goes": [f"Verse {verse.verse_id}: its text, translation and metadata."],
            "stays": ["Every other verse, batch and judgement of the project."]}
    if uses:
        listed = ", ".join(f"{what} {_count(n, 'batch') if what in ('reference of', 'candidate in') else n}"
                           for what, n in uses.items())
        plan["refused"] = (f"the verse is in use ({listed}); judgements and batches never lose a verse. Delete or "
                           "change what uses it first (a batch without judgements can be deleted).")
    return plan


@transaction.atomic
def verse_delete(*, verse: Verse, actor) -> str:
    check_can_manage(project=verse.project, user=actor)
    refused = verse_delete_plan(verse).get("refused")
    if refused:
        raise Conflict(f"Verse {verse.verse_id!r} not deleted: {refused}")
    verse_id = verse.verse_id
    verse.delete()
    return f"Verse {verse_id!r} deleted."


# --- batches --------------------------------------------------------------------------------------

def batch_delete_plan(batch: Batch) -> dict:
    """What `services.projects.batch_delete` removes and keeps."""
    n_judgements = Judgement.objects.filter(batch=batch).count()
    plan = {"goes": [f"Batch {batch.name}: {_count(Pair.objects.filter(batch=batch).count(), 'pair')}, its "
                     f"candidate list and {_count(AnnotationSet.objects.filter(batch=batch).count(), 'unanswered set')}."],
            "stays": ["Its reference and candidate verses (they stay in the project).", "Every other batch."]}
    if n_judgements:
        plan["refused"] = (f"it holds {_count(n_judgements, 'judgement')} (undone ones included), which are never "
                           "deleted. Close it instead: annotators get no more pairs from it and everything is kept.")
    return plan
