"""Simulated annotators: judgements drawn from latent strengths, recorded through the same
services as real annotators (set_next → judgement_submit), so dashboards and budgets can be tried
before anyone annotates.

Latent strength of a candidate: by default its imported gold score scaled to the logit range
(θ = 6 · gold, so the best and worst STS candidates differ by about 6 logits, i.e. the best wins
~99.8% of comparisons with the worst); candidates without gold get θ ~ N(0, 1.5) from the seed.
Each simulated annotator k chooses A over B with probability σ((θ_A − θ_B) / s_k), where
s_k = noise · (0.5 + k / (N − 1)) spreads annotators from careful to sloppy around `noise`.
"""
from __future__ import annotations

import uuid

import numpy as np
from django.contrib.auth import get_user_model

from annotation.models import Batch, BatchCandidate, Project
from annotation.services.judgements import judgement_submit
from annotation.services.projects import batch_plan_judgements, membership_add
from annotation.services.scheduling import set_next
from core.services import user_create_or_update

GOLD_SCALE = 6.0


def latent_strengths(batch: Batch, rng: np.random.Generator) -> dict[int, float]:
    """Verse pk → latent strength θ for the batch's candidates."""
    out = {}
    for cand in BatchCandidate.objects.filter(batch=batch):
        out[cand.verse_id] = GOLD_SCALE * cand.gold_score if cand.gold_score is not None else float(rng.normal(0, 1.5))
    return out


def simulate_annotations(
    *, project: Project, annotators: int = 3, judgements_per_pair: int = 1, noise: float = 1.0, seed: int = 0,
    batch_ids: list[int] | None = None, max_judgements: int | None = None, progress=None,
) -> dict:
    """Run simulated annotators until the batches have no pairs left for them (or a cap is hit).

    Returns counts per batch and the users created (`sim-<project>-<k>`).
    """
    rng = np.random.default_rng(seed)
    users = []
    for k in range(annotators):
        name = f"sim-{project.name}-{k + 1}"[:150]
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            user, _ = user_create_or_update(username=name, password=uuid.uuid4().hex, roles=("annotator",))
        membership_add(project=project, username=name, role="annotator")
        users.append(user)
    scale = [noise * (0.5 + (k / (annotators - 1) if annotators > 1 else 0.5)) for k in range(annotators)]
    batches = Batch.objects.filter(project=project, status=Batch.Status.OPEN).select_related("project", "reference")
    if batch_ids:
        batches = batches.filter(pk__in=batch_ids)
    summary = {"annotators": [u.username for u in users], "batches": {}}
    total = 0
    batches = list(batches)
    for b_index, batch in enumerate(batches):
        if judgements_per_pair > 1 and not batch.pilot:
            batch_plan_judgements(batch=batch, per_pair=judgements_per_pair)
        theta = latent_strengths(batch, rng)
        count = 0
        active = list(range(annotators))
        while active:
            for k in list(active):
                annotation_set = set_next(batch=batch, annotator=users[k])
                if annotation_set is None:
                    active.remove(k)
                    continue
                for item in annotation_set.assignments.filter(status="open").select_related("pair"):
                    a, b = item.pair.verse_a_id, item.pair.verse_b_id
                    p_a = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b]) / scale[k]))
                    chosen = a if rng.random() < p_a else b
                    judgement_submit(annotator=users[k], assignment_id=item.pk, chosen_verse_id=chosen,
                                     client_uuid=uuid.uuid4(),
                                     response_ms=int(rng.integers(800, 6000)))
                    count += 1
                    total += 1
                if max_judgements and total >= max_judgements:
                    active = []
                    break
            if progress:
                progress((b_index + min(count / max(batch.n_pairs * judgements_per_pair, 1), 1.0)) / len(batches),
                         f"{batch.name}: {count} judgements")
        summary["batches"][batch.name] = count
        if max_judgements and total >= max_judgements:
            break
    summary["judgements"] = total
    return summary
