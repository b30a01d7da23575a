from django.core.management.base import BaseCommand, CommandError

from core.backups import BackupError, restore


class Command(BaseCommand):
    help = ("Replace the database's contents with a backup made by `manage.py backup` (stop the web and worker "
            "processes first). Asks for --yes: everything written since the backup is lost.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="the backup file")
        parser.add_argument("--yes", action="store_true", help="confirm: replace the current database")

    def handle(self, *args, **options):
        if not options["yes"]:
            raise CommandError("restore replaces the current database with the backup; add --yes to confirm")
        try:
            restore(options["path"])
        except BackupError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"restored {options['path']}")
