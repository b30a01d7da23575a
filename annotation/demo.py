"""Demo projects: the DBBE STS batches (real data) and the pilot study's five verses."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Batch, Project
from annotation.services.projects import batch_create, membership_add, project_create, verses_import

STS_PROJECT = "dbbe-sts-demo"
PILOT_PROJECT = "dbbe-pilot-demo"

# The pilot study's verses (Swaelens et al., §3.1: DBBE occurrence 18180, with the paper's translations).
PILOT_VERSES = [
    ("18180 1", "Ὥσπερ ξένοι χαίρουσιν ἰδεῖν πατρίδα,", "Just like travellers rejoice upon seeing their homeland,"),
    ("18180 2", "καὶ οἱ θαλαττεύοντες εὑρεῖν λιμένα,", "and sailors upon finding a harbour,"),
    ("18180 3", "καὶ οἱ στρατευόμενοι ἰδεῖν τὸ νῖκος,", "and soldiers upon seeing victory,"),
    ("18180 4", "καὶ οἱ πραγματευόμενοι ἰδεῖν τὸ κέρδος,", "and craftsmen upon seeing some profit,"),
    ("18180 5", "οὗτω καὶ οἱ γράφοντες ἰδεῖν βιβλίου τέλος.", "so do scribes upon seeing the end of the book."),
]


@transaction.atomic
def load_demo_projects() -> str:
    """Idempotent: creates what is missing and reports what exists."""
    User = get_user_model()
    lead = User.objects.get(username="lead")
    annotators = [u for u in ("annotator1", "annotator2", "annotator3") if User.objects.filter(username=u).exists()]
    lines = []
    project = Project.objects.filter(name=STS_PROJECT).first()
    if project is None:
        project = project_create(owner=lead, name=STS_PROJECT, title="DBBE STS demo (Swaelens et al.)")
        path = settings.DATA_DIR / "dbbe" / "STS_benchmark_medievalGreek.tsv"
        summary = verses_import(project=project, data=path.read_bytes(), filename=path.name)
        lines.append(f"{STS_PROJECT}: {summary['created']} verses, batches {', '.join(summary['batches'])}")
    else:
        lines.append(f"{STS_PROJECT}: exists ({project.batches.count()} batches)")
    pilot = Project.objects.filter(name=PILOT_PROJECT).first()
    if pilot is None:
        pilot = project_create(owner=lead, name=PILOT_PROJECT, title="Pilot: full overlap (5 verses, 6 pairs)",
                               set_size=6, overlap_per_set=0)
        import json

        data = json.dumps({"verses": [{"verse_id": v, "text": t, "translation": tr} for v, t, tr in PILOT_VERSES]})
        verses_import(project=pilot, data=data.encode(), filename="pilot.json")
        batch_create(project=pilot, reference_id="18180 1", candidate_ids=[v for v, _, _ in PILOT_VERSES[1:]],
                     name="pilot ref 18180 1", pilot=True, seed=1)
        lines.append(f"{PILOT_PROJECT}: 5 verses, 1 pilot batch of 6 pairs")
    for name in annotators:
        for target in (project, pilot):
            membership_add(project=target, username=name, role="annotator")
    n_batches = Batch.objects.filter(project__name__in=[STS_PROJECT, PILOT_PROJECT]).count()
    judged = _demo_judgements(project, [User.objects.get(username=u) for u in annotators])
    return "; ".join(lines) + (f" ({n_batches} batches; annotators: {', '.join(annotators)}; {judged} judgements "
                               f"in {STS_PROJECT}, so its dashboard and exports have figures)")


DEMO_SETS_PER_ANNOTATOR = 2


def _trigrams(text: str) -> set[str]:
    letters = "".join(ch for ch in text.lower() if ch.isalpha() or ch == " ")
    return {letters[i:i + 3] for i in range(len(letters) - 2)}


def _demo_judgements(project: Project, annotators: list) -> int:
    """A few sets judged by each demo annotator in the first STS batch (once: none are added when the project
    has judgements). Each picks the candidate sharing more letter trigrams with the reference, so the
    judgements agree with one another where it is clear and the dashboard's figures mean something."""
    from uuid import UUID

    from annotation.models import Judgement
    from annotation.services.judgements import judgement_submit
    from annotation.services.scheduling import set_next

    existing = Judgement.objects.filter(batch__project=project).count()
    batch = project.batches.order_by("pk").first()
    if existing or batch is None:
        return existing
    reference = _trigrams(batch.reference.text)
    for k, annotator in enumerate(annotators):
        for n in range(DEMO_SETS_PER_ANNOTATOR):
            annotation_set = set_next(batch=batch, annotator=annotator)
            if annotation_set is None:
                break
            for item in annotation_set.assignments.select_related("pair__verse_a", "pair__verse_b"):
                a, b = item.pair.verse_a, item.pair.verse_b
                chosen = a if len(_trigrams(a.text) & reference) >= len(_trigrams(b.text) & reference) else b
                judgement_submit(annotator=annotator, assignment_id=item.pk, chosen_verse_id=chosen.pk,
                                 client_uuid=UUID(int=(k * 1000 + n) * 1000 + item.pk))
    return Judgement.objects.filter(batch__project=project).count()
