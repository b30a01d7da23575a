"""The demo holds a few judgements (issue 27), so the README's first login (`lead`) finds figures in the demo
project's first export: each demo annotator judges two sets of the first STS batch, once."""
import pytest
from django.core.management import call_command

from annotation.demo import DEMO_SETS_PER_ANNOTATOR, STS_PROJECT, load_demo_projects
from annotation.models import Judgement, Project


@pytest.mark.django_db
def test_the_demo_has_judgements_and_the_first_export_has_numbers(client):
    call_command("load_demo_users")
    load_demo_projects()
    project = Project.objects.get(name=STS_PROJECT)
    judged = Judgement.objects.filter(batch__project=project)
    assert judged.values("annotator").distinct().count() == 3
    assert judged.count() == 3 * DEMO_SETS_PER_ANNOTATOR * project.set_size
    assert "60 judgements" in load_demo_projects() and judged.count() == 60  # not added twice
    assert client.login(username="lead", password="lead-demo-pass")
    rows = client.get(f"/api/v1/projects/{project.pk}/scores/").json()["results"]
    compared = [row for row in rows if row["comparisons"]]
    assert sum(row["comparisons"] for row in rows) == 2 * 60  # each judgement compares two candidates
    assert compared and all(row["normalized_score"] is not None and row["rank"] for row in compared)
