"""Management commands of the annotation app."""
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Batch, Verse

from .conftest import SHARED_SAMPLE, STS

pytestmark = pytest.mark.django_db


def test_import_verses_command_reads_the_real_files(lead_user, capsys):
    from annotation.services.projects import project_create

    project_create(owner=lead_user, name="cmd")
    call_command("import_verses", str(STS), "--project", "cmd")
    out = capsys.readouterr().out
    assert "dbbe-sts: 100 new verse(s)" in out and "batch created: ref 16977 1" in out
    assert Batch.objects.filter(project__name="cmd").count() == 3
    if SHARED_SAMPLE.exists():
        # The sample spells some of the same DBBE verses differently (e.g. '18540 2'): into the same
        # project that is refused with the line; into its own project it imports.
        with pytest.raises(CommandError, match="line 120: verse '18540 2' already exists in the project with a different text"):
            call_command("import_verses", str(SHARED_SAMPLE), "--project", "cmd")
        project_create(owner=lead_user, name="sample")
        call_command("import_verses", str(SHARED_SAMPLE), "--project", "sample")
        out = capsys.readouterr().out
        assert "dbbe-verse-sample: 1388 new verse(s)" in out and "9 row(s) repaired" in out
        assert Verse.objects.filter(project__name="sample", type_id="2150").exists()


def test_import_verses_command_reports_bad_files_and_imports_nothing(lead_user, tmp_path):
    from annotation.services.projects import project_create

    project_create(owner=lead_user, name="cmd2")
    bad = tmp_path / "bad.tsv"
    bad.write_text("verse_id\ttext\n1 1\tα\n1 2\t\n", encoding="utf-8")
    with pytest.raises(CommandError, match="Nothing imported.*line 3: verse '1 2' has empty text"):
        call_command("import_verses", str(bad), "--project", "cmd2")
    assert not Verse.objects.filter(project__name="cmd2").exists()
    with pytest.raises(CommandError, match="No project named"):
        call_command("import_verses", str(bad), "--project", "nope")


def test_load_demo_is_idempotent(capsys):
    call_command("load_demo")
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "dbbe-sts-demo: exists (3 batches)" in out
    assert Batch.objects.filter(project__name="dbbe-sts-demo").count() == 3
    assert Batch.objects.get(project__name="dbbe-pilot-demo").pilot


def test_simulate_annotations_compares_designs_without_writing(lead_user, capsys):
    import json

    from annotation.models import Judgement
    from annotation.services.projects import batch_create, project_create, verses_import

    project = project_create(owner=lead_user, name="designs")
    verses_import(project=project, data=json.dumps([{"verse_id": f"4 {k}", "text": f"v{k}"} for k in range(16)]).encode(),
                  filename="v.json")
    batch_create(project=project, reference_id="4 0", candidate_ids=[f"4 {k}" for k in range(1, 16)], name="b")
    call_command("simulate_annotations", "--project", "designs", "--compare-designs", "2", "--annotators", "4")
    out = capsys.readouterr().out
    assert "b: 15 candidates, 4 simulated annotators, 2 seed(s)" in out
    assert "exhaustive:" in out and "random ρ" in out and "adaptive ρ" in out and "adaptive: ρ ≥ 0.95" in out
    assert not Judgement.objects.filter(batch__project=project).exists()
