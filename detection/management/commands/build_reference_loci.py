"""manage.py build_reference_loci: index the loci of a reference corpus (The Latin Library) for corpus uniqueness.

The corpus path is operator input on the command line (the web never passes one). The shipped index
(``data/reference/latin-library-loci``) was built with
``manage.py build_reference_loci --corpus ../shared/data/latin_library/latin_library.tar.xz``.
"""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.commands import stderr_progress
from detection.methods.lexical.reference_loci import INDEX_NAME, SHIPPED_DIR, ReferenceError, build_index


class Command(BaseCommand):
    help = "Index which loci of a reference corpus hold each content lemma (corpus uniqueness of parallels)."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, p):
        p.add_argument("--corpus", required=True, help="folder of Latin Library pages, one file, or a .tar.xz of them")
        p.add_argument("--out", default=str(SHIPPED_DIR / INDEX_NAME), help="index folder (default: the shipped one)")

    def handle(self, *args, **o):
        try:
            m = build_index(o["corpus"], o["out"], cache_dir=settings.VAR_DIR / "cache" / "lemmas",
                            progress=stderr_progress(self.stderr))
        except (ReferenceError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{o['out']}: {m['loci']:,} loci, {m['lemmas']:,} lemmas, {m['postings']:,} postings, "
                          f"{m['build_seconds']} s")
