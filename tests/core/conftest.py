"""A small world for the bad-input tests: a project with verses, a batch, one judgement, a Loci
Similes version and a Greek STS gold set, plus clients that return a 500 instead of raising."""
import json
import os
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from django.conf import settings

from tests.conftest import api_key

LOCI_DIR = Path(settings.DATA_DIR) / "locisimiles"
STS_FILE = Path(settings.DATA_DIR) / "dbbe" / "STS_benchmark_medievalGreek.tsv"


@pytest.fixture
def world(users):
    """Objects every URL of the site can point at; `users['staff']` may read and write all of them."""
    import uuid

    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next
    from benchmarks.services import benchmark_import_545, gold_set_import_file

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


# Outcomes of the requests these tests send, per test module, printed at the end of the run
# (the README's reliability figures come from there).
OUTCOMES: dict[str, Counter] = defaultdict(Counter)


def record_outcome(status_code: int) -> None:
    module = os.environ.get("PYTEST_CURRENT_TEST", "?").split("::")[0]
    kind = "500" if status_code >= 500 else "4xx" if status_code >= 400 else "success"
    OUTCOMES[module][kind] += 1


def pytest_terminal_summary(terminalreporter):
    for module, tally in sorted(OUTCOMES.items()):
        total = sum(tally.values())
        terminalreporter.write_line(
            f"bad input, {module}: {total} requests, {tally['4xx']} answered 4xx, {tally['success']} succeeded, "
            f"{tally['500']} server errors (5xx)")


class _Recording:
    """A test client that returns a 500 instead of raising, and records every status code."""

    def request(self, *args, **kwargs):
        response = super().request(*args, **kwargs)
        record_outcome(response.status_code)
        return response


@pytest.fixture
def raw_client_for(users):
    """Like client_for, but a server error comes back as a 500 response instead of an exception."""
    from rest_framework.test import APIClient

    client_class = type("RecordingAPIClient", (_Recording, APIClient), {})

    def make(role):
        client = client_class(raise_request_exception=False)
        if role is not None:
            user = users[role] if isinstance(role, str) else role
            client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
        return client

    return make


@pytest.fixture
def raw_page_client_for(users):
    """A logged-in Django test client for the pages, recording like raw_client_for."""
    from django.test import Client

    client_class = type("RecordingClient", (_Recording, Client), {})

    def make(role):
        client = client_class(raise_request_exception=False)
        client.force_login(users[role])
        return client

    return make


def db_counts() -> dict[str, int]:
    """Rows per table of every installed model (one query): equal before and after means nothing
    was stored or deleted."""
    from django.apps import apps
    from django.db import connection

    tables = sorted({model._meta.db_table for model in apps.get_models()})
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {quote(t)})" for t in tables))
        return dict(zip(tables, cursor.fetchone()))


@pytest.fixture
def counts():
    return db_counts
