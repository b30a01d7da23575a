"""Migration 0002 links gold sets made from a batch before it existed to their project (by the description
the batch→gold-set view wrote), so they do not become readable by every lead after the upgrade."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("benchmarks", "0001_initial")]
AFTER = [("benchmarks", "0002_goldset_source_project")]


@pytest.mark.django_db(transaction=True)
def test_existing_batch_gold_sets_get_their_source_project(make_user):
    owner = make_user("old-lead", "lead")
    try:
        _migrate_back_and_forth(owner)
    finally:  # whatever happened, leave every app at its latest migration for the tests that follow
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate_back_and_forth(owner):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    from annotation.services.projects import project_create

    project = project_create(owner=owner, name="old-project")  # annotation's tables are at their latest
    GoldSet = old.get_model("benchmarks", "GoldSimilaritySet")
    GoldSet.objects.create(name="from batch", source="annotation",
                           source_description="annotation project old-project, batch b1")
    GoldSet.objects.create(name="lost project", source="annotation",
                           source_description="annotation project gone, batch b2")
    GoldSet.objects.create(name="file", source="file")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps.get_model("benchmarks", "GoldSimilaritySet")
    links = dict(new.objects.values_list("name", "source_project_id"))
    assert links == {"from batch": project.pk, "lost project": None, "file": None}
    assert not new.objects.filter(published=True).exists()
