from django.core.management.base import BaseCommand, CommandError

from core.backups import BackupError, backup


class Command(BaseCommand):
    help = ("Back up the database while the site runs (PostgreSQL: pg_dump custom format; SQLite: its online "
            "backup API). Prints the backup's path.")

    def add_arguments(self, parser):
        parser.add_argument("--output", help="backup file (default: VAR_DIR/backups/similia-<UTC time>.<suffix>)")

    def handle(self, *args, **options):
        try:
            path = backup(options.get("output"))
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(str(path))
