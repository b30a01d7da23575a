"""Attention checks: known-answer pairs mixed into sets, never scored.

Two kinds:
- built by the platform: the reference verse itself (a candidate identical to the reference) against
  the batch's candidate least like it (fewest shared character trigrams, so the answer is obvious); the
  identical verse is the answer. An attentive annotator always
  chooses it, a random clicker half of the time.
- marked by a lead: any two verses of the project with the one an attentive annotator must choose.
  If the two are already a pair of the batch, that pair becomes a check (its judgements leave the
  scores).
Each set gets up to ``project.attention_per_set`` checks the annotator has not seen
(annotation.services.scheduling); the dashboard shows each annotator's pass rate.
"""
from __future__ import annotations

import random

from django.db import transaction
from django.db.models import Max

from annotation.models import Batch, BatchCandidate, Pair, Verse
from annotation.services.errors import AnnotationError, NotFound
from annotation.services.members import check_can_manage

MAX_CHECKS_PER_BATCH = 200


def _trigrams(text: str) -> set[str]:
    padded = f" {' '.join(text.lower().split())} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def _likeness(a: set[str], b: set[str]) -> float:
    """Jaccard similarity of two character-trigram sets (0 when both are empty)."""
    return len(a & b) / len(a | b) if a | b else 0.0


def _next_rank(batch: Batch) -> int:
    top = Pair.objects.filter(batch=batch).aggregate(m=Max("rank"))["m"]
    return 0 if top is None else top + 1


@transaction.atomic
def attention_checks_build(*, batch: Batch, actor, n: int = 5, seed: int | None = None) -> int:
    """Add up to ``n`` platform-built checks (reference vs the candidates least like it, not yet used).
    Returns how many were added."""
    check_can_manage(project=batch.project, user=actor)
    existing = Pair.objects.filter(batch=batch, attention_answer__isnull=False)
    if not 1 <= n <= MAX_CHECKS_PER_BATCH or existing.count() + n > MAX_CHECKS_PER_BATCH:
        raise AnnotationError(f"A batch holds at most {MAX_CHECKS_PER_BATCH} attention checks.")
    ref = batch.reference_id
    used = {p.verse_a_id if p.verse_b_id == ref else p.verse_b_id
            for p in existing.filter(attention_answer_id=ref)}
    texts = dict(BatchCandidate.objects.filter(batch=batch).values_list("verse_id", "verse__text"))
    others = [v for v in texts if v not in used]
    random.Random(seed).shuffle(others)  # ties in likeness are broken at random
    ref_grams = _trigrams(Verse.objects.get(pk=ref).text)
    others.sort(key=lambda v: _likeness(ref_grams, _trigrams(texts[v])))
    rank = _next_rank(batch)
    pairs = []
    for k, other in enumerate(others[:n]):
        a, b = sorted((ref, other))
        pairs.append(Pair(batch=batch, verse_a_id=a, verse_b_id=b, rank=rank + k, planned=0, attention_answer_id=ref))
    Pair.objects.bulk_create(pairs)
    return len(pairs)


@transaction.atomic
def attention_check_mark(*, batch: Batch, actor, answer_id: str, other_id: str) -> Pair:
    """A lead's known-answer pair: ``answer_id`` must win against ``other_id`` (verse ids)."""
    check_can_manage(project=batch.project, user=actor)
    verses = {v.verse_id: v for v in Verse.objects.filter(project=batch.project, verse_id__in=[answer_id, other_id])}
    missing = [v for v in (answer_id, other_id) if v not in verses]
    if missing:
        raise NotFound(f"Not among the project's verses: {', '.join(repr(m) for m in missing)}.")
    if answer_id == other_id:
        raise AnnotationError("An attention check needs two different verses.")
    answer, other = verses[answer_id], verses[other_id]
    a, b = sorted((answer.pk, other.pk))
    pair = Pair.objects.filter(batch=batch, verse_a_id=a, verse_b_id=b).first()
    if pair is None:
        return Pair.objects.create(batch=batch, verse_a_id=a, verse_b_id=b, rank=_next_rank(batch), planned=0,
                                   attention_answer=answer)
    pair.attention_answer = answer
    pair.save(update_fields=["attention_answer"])
    return pair
