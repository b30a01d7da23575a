"""A small world for the bad-input tests: a project with verses, a batch, one judgement, a Loci
Similes version and a Greek STS gold set, plus clients that return a 500 instead of raising."""
import json
from pathlib import Path

import pytest
from django.conf import settings

LOCI_DIR = Path(settings.DATA_DIR) / "locisimiles"
STS_FILE = Path(settings.DATA_DIR) / "dbbe" / "STS_benchmark_medievalGreek.tsv"


@pytest.fixture
def world(users):
    """Objects every URL of the site can point at; `users['staff']` may read and write all of them."""
    import uuid

    from benchmarks.services import benchmark_import_545, gold_set_import_file
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next

    project = project_create(owner=users["lead"], name="bad-input", set_size=4, overlap_per_set=1)
    verses = [{"verse_id": f"100 {k}", "text": f"στίχος {k}"} for k in range(6)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json")
    membership_add(project=project, username=users["annotator"].username)
    batch = batch_create(project=project, reference_id="100 0", candidate_ids=[f"100 {k}" for k in range(1, 6)],
                         seed=1)
    annotation_set = set_next(batch=batch, annotator=users["annotator"])
    first = annotation_set.assignments.select_related("pair").first()
    judgement_submit(annotator=users["annotator"], assignment_id=first.pk, chosen_verse_id=first.pair.verse_a_id,
                     client_uuid=uuid.uuid4(), response_ms=900)
    open_assignment = annotation_set.assignments.exclude(pk=first.pk).select_related("pair").first()
    version, _ = benchmark_import_545(with_text_path=LOCI_DIR / "pairs_545_with_text.csv",
                                      ref_type_path=LOCI_DIR / "pairs_545_ref_type.csv", name="loci-bad-input")
    gold_set, _ = gold_set_import_file(path=STS_FILE, name="sts-bad-input")
    return {"project": project, "batch": batch, "set": annotation_set, "assignment": open_assignment,
            "version": version, "gold_set": gold_set}


@pytest.fixture
def raw_client_for(users):
    """Like client_for, but a server error comes back as a 500 response instead of an exception."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(role):
        client = APIClient(raise_request_exception=False)
        if role is not None:
            user = users[role] if isinstance(role, str) else role
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
        return client

    return make


def db_counts() -> dict[str, int]:
    """Rows per model of every installed app: equal before and after means nothing was stored."""
    from django.apps import apps

    return {model._meta.label: model.objects.count() for model in apps.get_models()}


@pytest.fixture
def counts():
    return db_counts
