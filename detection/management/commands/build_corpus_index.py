"""manage.py build_corpus_index: build (or extend) a search corpus's index from a folder or archive of `.tess`
(and plain `.txt`) files. The path is operator input on the command line; pages queue the same build as the job
``detection.build_corpus_index`` with a shipped source's name. The whole shipped Tesserae Latin corpus:
``manage.py build_corpus_index --corpus tesserae-la --from data/tesserae/tesserae_la.tar.xz``. ``--default``
queues `make run`'s default corpus (the classical verse poets) as a job unless it is ready or being built.
"""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.commands import command_errors, stderr_progress
from core.demo import DEMO_OWNER
from detection.services.corpora import SUBSETS, corpus_build, queue_default_corpus


class Command(BaseCommand):
    help = "Build a search corpus's index from .tess files (a folder or an archive); --extend adds works."

    def add_arguments(self, p):
        p.add_argument("--default", action="store_true", help="queue the default corpus's build as a job (make run)")
        p.add_argument("--corpus", help="the corpus's name (lower-case letters, digits, hyphens)")
        p.add_argument("--from", dest="path", help="a folder or archive (.tar.xz, .zip) of .tess files")
        p.add_argument("--subset", choices=sorted(SUBSETS), default="all", help="works to take (default: all)")
        p.add_argument("--work", action="append", default=[], help="only this work (file name without .tess); repeat")
        p.add_argument("--extend", action="store_true", help="add the works to the corpus's index (no rebuild)")

    def handle(self, *args, **o):
        if o["default"]:
            with command_errors():
                self.stdout.write(queue_default_corpus(get_user_model().objects.filter(username=DEMO_OWNER).first()))
            return
        if not (o["corpus"] and o["path"]):
            raise CommandError("give --corpus NAME and --from PATH (or --default)")
        with command_errors():
            r = corpus_build(name=o["corpus"], path=o["path"], subset=o["subset"], works=o["work"] or None,
                             extend=o["extend"], progress=stderr_progress(self.stderr))
        for line in r["skipped"]["lines"]:
            self.stderr.write(f"skipped: {line}")
        self.stdout.write(f"{r['corpus']}: {r['works']} works, {r['segments']:,} segments ({r['added']:,} added), "
                          f"{r['bytes'] / 2**20:.0f} MiB, {r['seconds']} s; {r['skipped']['summary']}")
