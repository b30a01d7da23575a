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
from annotation.services.errors import AnnotationError, Conflict, NotFound
from core.roles import ANNOTATOR, LEAD, has_role


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
def verses_import(*, project: Project, data: bytes, filename: str = "file", create_batches: bool = True) -> dict:
    """Import a verse file into a project, all or nothing.

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
    batches = []
    if create_batches:
        batches = _batches_from_file(project=project, parsed=parsed, filename=filename)
    return {
        "format": parsed.format, "created": len(to_create), "unchanged": unchanged,
        "batches": [batch.name for batch in batches], "notes": parsed.notes,
    }


def _size(n_bytes: int) -> str:
    return f"{round(n_bytes / 2**20, 1):g} MB" if n_bytes >= 2**20 else f"{n_bytes:,} bytes"


def check_upload_size(*, size: int, filename: str = "file") -> None:
    """413 for a file above settings.SIMILIA_MAX_UPLOAD_BYTES (checked before it is read)."""
    limit = settings.SIMILIA_MAX_UPLOAD_BYTES
    if size > limit:
        raise AnnotationError(f"{filename} is {_size(size)}; the limit is {_size(limit)} per file "
                              "(setting SIMILIA_MAX_UPLOAD_MB). Split the file.", status=413)


def check_batch_size(n_candidates: int) -> None:
    """A batch's N(N-1)/2 pairs are created in the request: refuse above settings.SIMILIA_MAX_BATCH_PAIRS."""
    limit = settings.SIMILIA_MAX_BATCH_PAIRS
    n_pairs = n_candidates * (n_candidates - 1) // 2
    if n_pairs > limit:
        most = (1 + math.isqrt(1 + 8 * limit)) // 2  # the largest n with n(n-1)/2 <= limit
        raise AnnotationError(f"A batch of {n_candidates:,} candidates has {n_pairs:,} pairs; the limit is {limit:,} "
                              f"pairs per batch ({most:,} candidates). Split the candidates into several batches.")


def _batches_from_file(*, project: Project, parsed: ParsedFile, filename: str) -> list[Batch]:
    """Batches defined by the file (the STS pair file: one per reference), with any gold scores."""
    created = []
    for spec in parsed.batches:
        name = f"ref {spec.reference_id}"
        if Batch.objects.filter(project=project, name=name).exists():
            continue
        created.append(batch_create(
            project=project, reference_id=spec.reference_id, candidate_ids=spec.candidate_ids, name=name,
            gold_scores=spec.gold_scores,
        ))
    return created


@transaction.atomic
def batch_create(
    *, project: Project, reference_id: str, candidate_ids: Iterable[str], name: str = "", pilot: bool = False,
    seed: int | None = None, gold_scores: dict[str, float] | None = None,
) -> Batch:
    """Create a batch: one reference verse, N candidates and all N(N-1)/2 unordered pairs in bulk.

    Args:
        reference_id, candidate_ids: DBBE-style verse ids of verses already in the project.
        pilot: full overlap — every member judges every pair.
        seed: seeds the random serving order (for reproducible tests).
        gold_scores: imported gold similarity per candidate id (e.g. from the STS file), kept for
            simulation and comparison.
    """
    candidate_ids = list(dict.fromkeys(str(c) for c in candidate_ids))
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
    name = name or f"ref {reference_id}"
    try:
        with transaction.atomic():
            batch = Batch.objects.create(
                project=project, name=name, reference=verses[reference_id], pilot=pilot,
                n_candidates=len(candidate_ids),
            )
    except IntegrityError:
        raise Conflict(f"The project already has a batch named {name!r}.") from None
    gold = gold_scores or {}
    BatchCandidate.objects.bulk_create(
        [BatchCandidate(batch=batch, verse=verses[c], position=i, gold_score=gold.get(c)) for i, c in enumerate(candidate_ids)]
    )
    pks = sorted(verses[c].pk for c in candidate_ids)
    n = len(pks)
    n_pairs = n * (n - 1) // 2
    ranks = list(range(n_pairs))
    random.Random(seed).shuffle(ranks)
    pairs = []
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            pairs.append(Pair(batch=batch, verse_a_id=pks[i], verse_b_id=pks[j], rank=ranks[k]))
            k += 1
    Pair.objects.bulk_create(pairs, batch_size=2500)
    Batch.objects.filter(pk=batch.pk).update(n_pairs=n_pairs)
    batch.n_pairs = n_pairs
    return batch


@transaction.atomic
def batch_set_status(*, batch: Batch, status: str) -> Batch:
    if status not in Batch.Status.values:
        raise AnnotationError(f"Unknown batch status {status!r}.")
    batch.status = status
    batch.save(update_fields=["status"])
    return batch


@transaction.atomic
def batch_plan_judgements(*, batch: Batch, per_pair: int) -> int:
    """Plan `per_pair` judgements for every pair of the batch (by different annotators, or by the
    same annotator in test–retest mode). Never lowers a pair below what it already has."""
    if per_pair < 1:
        raise AnnotationError("per_pair must be at least 1.")
    from django.db.models import F
    from django.db.models.functions import Greatest

    return Pair.objects.filter(batch=batch).update(planned=Greatest(F("taken"), per_pair))
