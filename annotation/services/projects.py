"""Projects, members, verses and batches."""
from __future__ import annotations

import math
import random
from typing import Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from annotation.importing import ImportLimits, ParsedFile, VerseFileError, parse_verse_file
from annotation.models import Batch, BatchCandidate, Membership, Pair, Project, Verse
from annotation.services.bulk import rows_insert
from annotation.services.errors import AnnotationError, Conflict, NotFound
from core.roles import ANNOTATOR, LEAD, has_role
from core.upload_limit import too_large_message


@transaction.atomic
def project_create(*, owner, name: str, title: str = "", **settings) -> Project:
    if not has_role(owner, LEAD):
        from annotation.services.errors import NotAllowed

        raise NotAllowed("Only leads can create projects.")
    if Project.objects.filter(name=name).exists():
        raise Conflict(f"A project named {name!r} exists already.")
    project = Project(owner=owner, name=name, title=title or name, **settings)
    _validate_project(project)
    project.save()
    Membership.objects.create(project=project, user=owner, role=Membership.Role.LEAD)
    return project


def _validate_project(project: Project) -> None:
    from django.core.exceptions import ValidationError

    # The rules a lead can break with the form first, in words (full_clean would name the
    # database constraint: "Constraint “project_overlap_le_set” is violated").
    if isinstance(project.set_size, int) and project.set_size < 1:
        raise AnnotationError("Pairs per set must be at least 1.")
    if (isinstance(project.set_size, int) and isinstance(project.overlap_per_set, int)
            and project.overlap_per_set > project.set_size):
        raise AnnotationError(f"The overlap pairs per set ({project.overlap_per_set}) cannot exceed the pairs per set "
                              f"({project.set_size}).")
    try:
        project.full_clean(exclude=["owner"])
    except ValidationError as exc:
        problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        raise AnnotationError(f"Invalid project settings — {problems}") from None
    if project.set_size < 1:
        raise AnnotationError("set_size must be at least 1.")
    if project.overlap_per_set > project.set_size:
        raise AnnotationError("overlap_per_set cannot exceed set_size.")


@transaction.atomic
def project_update(*, project: Project, **fields) -> Project:
    for key, value in fields.items():
        setattr(project, key, value)
    _validate_project(project)
    project.save()
    return project


@transaction.atomic
def membership_add(*, project: Project, username: str, role: str = Membership.Role.ANNOTATOR) -> Membership:
    """Invite an existing user to the project (idempotent; updates the role)."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise NotFound(f"No user named {username!r}.")
    if role not in Membership.Role.values:
        raise AnnotationError(f"Unknown project role {role!r}; use annotator or lead.")
    needed = ANNOTATOR if role == Membership.Role.ANNOTATOR else LEAD
    if not has_role(user, needed):
        hint = ("send them an invitation link from the project page (it grants the annotator role)"
                if needed == ANNOTATOR else "ask an administrator to grant it")
        raise AnnotationError(f"{username} does not hold the {needed} role; {hint}.")
    membership, _ = Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def verses_import(*, project: Project, data: bytes, filename: str = "file", create_batches: bool = True,
                  owner=None, seed: int | None = None) -> dict:
    """Import a verse file into a project, all or nothing; `seed` seeds the serving order of the batches the file
    defines (`batch_create`), for reproducible tests.

    Returns a summary dict (created, unchanged, batches, format, notes). Raises VerseFileError naming
    the line and the problem; on any error nothing is imported.
    """
    check_upload_size(size=len(data), filename=filename)
    parsed = parse_verse_file(data, filename, limits=ImportLimits(
        max_rows=settings.SIMILIA_IMPORT_MAX_ROWS, max_columns=settings.SIMILIA_IMPORT_MAX_COLUMNS,
        max_json_depth=settings.SIMILIA_JSON_MAX_DEPTH))
    existing = {v.verse_id: v for v in Verse.objects.filter(project=project, verse_id__in=[p.verse_id for p in parsed.verses])}
    to_create = []
    unchanged = 0
    for verse in parsed.verses:
        known = existing.get(verse.verse_id)
        if known is not None:
            if known.text != verse.text:
                raise VerseFileError(
                    f"{filename}, line {verse.line}: verse {verse.verse_id!r} already exists in the project with "
                    "a different text."
                )
            unchanged += 1
            continue
        to_create.append(Verse(
            project=project, verse_id=verse.verse_id, text=verse.text, translation=verse.translation,
            occurrence_id=verse.occurrence_id, verse_number=verse.verse_number, type_id=verse.type_id,
            group_id=verse.group_id, metadata=verse.metadata,
        ))
    Verse.objects.bulk_create(to_create, batch_size=1000)
    batches, jobs = [], []
    if create_batches:
        batches, jobs = _batches_from_file(project=project, parsed=parsed, filename=filename, owner=owner, seed=seed)
    return {
        "format": parsed.format, "created": len(to_create), "unchanged": unchanged,
        "batches": [batch.name for batch in batches], "batch_jobs": [job.pk for job in jobs], "notes": parsed.notes,
    }


def check_upload_size(*, size: int, filename: str = "file") -> None:
    """413 for a file above settings.SIMILIA_MAX_UPLOAD_BYTES (uploads are stopped earlier, while they
    stream in: core/upload_limit.py; this guards the commands and direct calls)."""
    if size > settings.SIMILIA_MAX_UPLOAD_BYTES:
        raise AnnotationError(too_large_message(size=size, filename=filename), status=413)


def check_batch_size(n_candidates: int) -> None:
    """Refuse a batch above settings.SIMILIA_MAX_BATCH_PAIRS pairs (batches above
    SIMILIA_BATCH_JOB_PAIRS are accepted but created by a job, see `batch_create_or_job`)."""
    limit = settings.SIMILIA_MAX_BATCH_PAIRS
    n_pairs = n_candidates * (n_candidates - 1) // 2
    if n_pairs > limit:
        most = (1 + math.isqrt(1 + 8 * limit)) // 2  # the largest n with n(n-1)/2 <= limit
        raise AnnotationError(f"A batch of {n_candidates:,} candidates has {n_pairs:,} pairs; the limit is {limit:,} "
                              f"pairs per batch ({most:,} candidates). Split the candidates into several batches.")


def _batches_from_file(*, project: Project, parsed: ParsedFile, filename: str, owner=None,
                       seed: int | None = None) -> tuple[list[Batch], list]:
    """Batches defined by the file (the STS pair file: one per reference), with any gold scores.
    Returns (batches created now, jobs creating the large ones after the import commits)."""
    created, jobs = [], []
    for spec in parsed.batches:
        name = f"ref {spec.reference_id}"
        if Batch.objects.filter(project=project, name=name).exists():
            continue
        made = batch_create_or_job(
            project=project, reference_id=spec.reference_id, candidate_ids=spec.candidate_ids, name=name,
            gold_scores=spec.gold_scores, owner=owner, seed=seed,
        )
        (created if isinstance(made, Batch) else jobs).append(made)
    return created, jobs


def _batch_check(*, project: Project, reference_id: str, candidate_ids: list[str], name: str) -> dict[str, Verse]:
    """Everything that can refuse a batch, checked before anything is written; returns verse id → Verse."""
    if reference_id in candidate_ids:
        raise AnnotationError(f"The reference verse {reference_id!r} cannot also be a candidate.")
    if len(candidate_ids) < 2:
        raise AnnotationError("A batch needs at least two candidate verses.")
    check_batch_size(len(candidate_ids))
    verses = {v.verse_id: v for v in Verse.objects.filter(project=project, verse_id__in=[reference_id, *candidate_ids])}
    missing = [verse_id for verse_id in [reference_id, *candidate_ids] if verse_id not in verses]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (" …" if len(missing) > 5 else "")
        raise AnnotationError(f"{len(missing)} verse id(s) are not among the project's verses: {shown}.")
    if Batch.objects.filter(project=project, name=name).exists():
        raise Conflict(f"The project already has a batch named {name!r}.")
    return verses


def batch_create_or_job(
    *, project: Project, reference_id: str, candidate_ids: Iterable[str], name: str = "", pilot: bool = False,
    seed: int | None = None, gold_scores: dict[str, float] | None = None, owner=None,
):
    """`batch_create` in this request up to settings.SIMILIA_BATCH_JOB_PAIRS pairs; above it, check the
    batch now and create it in an `annotation.batch_create` job (returned instead of the Batch)."""
    from jobs.services import job_create

    candidate_ids = list(dict.fromkeys(str(c) for c in candidate_ids))
    name = name or f"ref {reference_id}"
    n = len(candidate_ids)
    if n * (n - 1) // 2 <= settings.SIMILIA_BATCH_JOB_PAIRS:
        return batch_create(project=project, reference_id=reference_id, candidate_ids=candidate_ids, name=name,
                            pilot=pilot, seed=seed, gold_scores=gold_scores)
    _batch_check(project=project, reference_id=reference_id, candidate_ids=candidate_ids, name=name)
    return job_create(kind="annotation.batch_create", owner=owner, params={
        "project_id": project.pk, "reference_id": reference_id, "candidate_ids": candidate_ids, "name": name,
        "pilot": pilot, "seed": seed, "gold_scores": gold_scores or {}})


@transaction.atomic
def batch_create(
    *, project: Project, reference_id: str, candidate_ids: Iterable[str], name: str = "", pilot: bool = False,
    seed: int | None = None, gold_scores: dict[str, float] | None = None, progress=None,
) -> Batch:
    """Create a batch: one reference verse, N candidates and all N(N-1)/2 unordered pairs in bulk.

    Args:
        reference_id, candidate_ids: DBBE-style verse ids of verses already in the project.
        pilot: full overlap — every member judges every pair.
        seed: seeds the random serving order (for reproducible tests).
        gold_scores: imported gold similarity per candidate id (e.g. from the STS file), kept for
            simulation and comparison.
        progress: `progress(fraction, message)` while the pairs are written (the batch job's).
    """
    batch, verse_pks = batch_start(project=project, reference_id=reference_id, candidate_ids=candidate_ids, name=name,
                                   pilot=pilot, gold_scores=gold_scores)
    n_pairs = pairs_insert(batch_id=batch.pk, verse_pks=verse_pks, seed=seed, progress=progress)
    Batch.objects.filter(pk=batch.pk).update(n_pairs=n_pairs)
    batch.n_pairs = n_pairs
    return batch


@transaction.atomic
def batch_start(*, project: Project, reference_id: str, candidate_ids: Iterable[str], name: str = "",
                pilot: bool = False, gold_scores: dict[str, float] | None = None,
                status: str = Batch.Status.OPEN) -> tuple[Batch, list[int]]:
    """Check a batch and create its row and candidates (no pairs yet); returns (batch, candidate verse pks)."""
    candidate_ids = list(dict.fromkeys(str(c) for c in candidate_ids))
    name = name or f"ref {reference_id}"
    verses = _batch_check(project=project, reference_id=reference_id, candidate_ids=candidate_ids, name=name)
    try:
        with transaction.atomic():
            batch = Batch.objects.create(
                project=project, name=name, reference=verses[reference_id], pilot=pilot,
                n_candidates=len(candidate_ids), status=status,
            )
    except IntegrityError:
        raise Conflict(f"The project already has a batch named {name!r}.") from None
    gold = gold_scores or {}
    BatchCandidate.objects.bulk_create(
        [BatchCandidate(batch=batch, verse=verses[c], position=i, gold_score=gold.get(c)) for i, c in enumerate(candidate_ids)]
    )
    return batch, [verses[c].pk for c in candidate_ids]


def pairs_insert(*, batch_id: int, verse_pks: list[int], seed: int | None = None, progress=None) -> int:
    """All unordered pairs of `verse_pks` (verse_a < verse_b) with a random serving rank, written as
    plain rows (COPY on PostgreSQL); the same ranks as before for the same seed. Returns the count."""
    pks = sorted(verse_pks)
    n = len(pks)
    n_pairs = n * (n - 1) // 2
    ranks = list(range(n_pairs))
    random.Random(seed).shuffle(ranks)
    rank = iter(ranks)
    rows = ((batch_id, pks[i], pks[j], next(rank), 1, 0) for i in range(n) for j in range(i + 1, n))
    return rows_insert(Pair._meta.db_table, ["batch_id", "verse_a_id", "verse_b_id", "rank", "planned", "taken"], rows,
                       total=n_pairs, progress=progress)


@transaction.atomic
def batch_set_status(*, batch: Batch, status: str) -> Batch:
    if status not in Batch.Status.values:
        raise AnnotationError(f"Unknown batch status {status!r}.")
    batch.status = status
    batch.save(update_fields=["status"])
    return batch


@transaction.atomic
def batch_rename(*, batch: Batch, name: str) -> Batch:
    """Rename a batch (names are unique in a project). Judgements, scores and exports follow the batch."""
    name = name.strip()
    if not name or len(name) > 200:
        raise AnnotationError("A batch name needs 1 to 200 characters.")
    if Batch.objects.filter(project_id=batch.project_id, name=name).exclude(pk=batch.pk).exists():
        raise AnnotationError(f"The project has a batch named {name!r} already.")
    batch.name = name
    batch.save(update_fields=["name"])
    return batch


@transaction.atomic
def batch_delete(*, batch: Batch) -> str:
    """Delete a batch that holds no judgement: its candidates, pairs and unanswered sets go; the verses stay in the
    project. A batch with judgements is refused (judgements are never deleted): close it instead, which keeps
    everything and only stops serving pairs. Returns what was deleted, in words."""
    from annotation.models import AnnotationSet, Judgement

    n_judgements = Judgement.objects.filter(batch=batch).count()
    if n_judgements:
        raise Conflict(f"Batch {batch.name!r} holds {n_judgements} judgement(s) (undone ones included), which are "
                              f"never deleted; close the batch instead: everything is kept and no pairs are served.")
    n_pairs = Pair.objects.filter(batch=batch).count()
    n_sets = AnnotationSet.objects.filter(batch=batch).count()
    name = batch.name
    batch.delete()
    return (f"Batch {name!r} deleted with its {n_pairs} pair(s) and {n_sets} unanswered set(s); its verses stay in "
            f"the project.")


@transaction.atomic
def batch_plan_judgements(*, batch: Batch, per_pair: int) -> int:
    """Plan `per_pair` judgements for every pair of the batch (by different annotators, or by the
    same annotator in test–retest mode). Never lowers a pair below what it already has."""
    if per_pair < 1:
        raise AnnotationError("per_pair must be at least 1.")
    from django.db.models import F
    from django.db.models.functions import Greatest

    return Pair.objects.filter(batch=batch).update(planned=Greatest(F("taken"), per_pair))
