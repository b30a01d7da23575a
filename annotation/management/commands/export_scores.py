import sys

from django.core.management.base import BaseCommand, CommandError

from annotation import analytics
from annotation.models import Project
from core.csv_export import MACHINE, SPREADSHEET, write_csv


class Command(BaseCommand):
    help = ("Write a project's similarity scores (wins, normalised score, win share, Bradley–Terry with interval) "
            "as CSV: byte-faithful by default, --spreadsheet to neutralise formulas for Excel/LibreOffice.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--output", default="-", help="CSV path, '-' for stdout")
        parser.add_argument("--batch", type=int, action="append")
        parser.add_argument("--n-boot", type=int, default=200)
        parser.add_argument("--spreadsheet", action="store_true",
                            help="prefix text cells that would run as a formula (=, +, -, @) with an apostrophe")

    def handle(self, *args, project, output, batch, n_boot, spreadsheet=False, **options):
        target = Project.objects.filter(name=project).first()
        if target is None:
            raise CommandError(f"No project named {project!r}.")
        rows = analytics.score_rows(analytics.load_project_data(target, batch_ids=batch), n_boot=n_boot)
        handle = sys.stdout if output == "-" else open(output, "w", newline="", encoding="utf-8")
        try:
            write_csv(handle, analytics.SCORE_COLUMNS, rows, mode=SPREADSHEET if spreadsheet else MACHINE)
        finally:
            if handle is not sys.stdout:
                handle.close()
        if output != "-":
            self.stdout.write(f"{len(rows)} rows written to {output}")
