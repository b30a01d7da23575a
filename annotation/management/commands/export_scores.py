import csv
import sys

from django.core.management.base import BaseCommand, CommandError

from annotation import analytics
from annotation.models import Project


class Command(BaseCommand):
    help = "Write a project's similarity scores (wins, normalised score, win share, Bradley–Terry with interval) as CSV."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--output", default="-", help="CSV path, '-' for stdout")
        parser.add_argument("--batch", type=int, action="append")
        parser.add_argument("--n-boot", type=int, default=200)

    def handle(self, *args, project, output, batch, n_boot, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"No project named {project!r}.")
        rows = analytics.score_rows(analytics.load_project_data(target, batch_ids=batch), n_boot=n_boot)
        handle = sys.stdout if output == "-" else open(output, "w", newline="", encoding="utf-8")
        try:
            writer = csv.DictWriter(handle, fieldnames=analytics.SCORE_COLUMNS, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: "" if row[k] is None else row[k] for k in analytics.SCORE_COLUMNS})
        finally:
            if handle is not sys.stdout:
                handle.close()
        if output != "-":
            self.stdout.write(f"{len(rows)} rows written to {output}")
