from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.importing import VerseFileError
from annotation.models import Project
from annotation.services.errors import AnnotationError
from annotation.services.projects import verses_import


class Command(BaseCommand):
    help = ("Import verses into a project (all or nothing): CSV/TSV/JSON, the DBBE STS pair file (creates one batch "
            "per reference) or the DBBE verse sample.")

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--no-batches", action="store_true", help="do not create the batches the file defines")

    def handle(self, *args, file, project, no_batches, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"No project named {project!r}.")
        path = Path(file)
        if not path.is_file():
            raise CommandError(f"{file}: no such file.")
        try:
            summary = verses_import(project=target, data=path.read_bytes(), filename=str(path),
                                    create_batches=not no_batches)
        except (VerseFileError, AnnotationError) as exc:
            raise CommandError(f"Nothing imported. {exc}") from None
        self.stdout.write(f"{summary['format']}: {summary['created']} new verse(s), {summary['unchanged']} already present")
        for name in summary["batches"]:
            self.stdout.write(f"batch created: {name}")
        for note in summary["notes"]:
            self.stdout.write(f"note: {note}")
