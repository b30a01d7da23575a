"""manage.py train_embeddings: train word vectors on a local corpus and store them under a registered name.

The corpus path is operator input on the command line (the web never passes a path: a job started from the
API names a registered corpus). Runs in the foreground with progress per epoch on stderr; ``--job`` queues
it as a ``train_embeddings`` job on the ``cpu`` queue instead (then ``--corpus`` must be a registered corpus
name: a folder or archive in the corpora directory, ``var/corpora`` by default).
"""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.commands import stderr_progress
from detection.methods.infrastructure import model_store
from detection.methods.semantic.word_vectors import LANGUAGES, METHODS, UNITS, TrainConfig, VectorsError, train_and_save


class Command(BaseCommand):
    help = "Train Word2Vec/FastText vectors on a corpus (folder, file or tar archive) and register them by name."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, p):
        p.add_argument("--corpus", required=True, help="folder of .txt/.tess files, one file, or a .tar.xz of them")
        p.add_argument("--name", required=True, help="model name in the models directory (letters, digits, . _ -)")
        p.add_argument("--method", choices=METHODS, default="word2vec")
        p.add_argument("--unit", choices=UNITS, default="lemma")
        p.add_argument("--language", choices=LANGUAGES, default="la")
        p.add_argument("--dim", type=int, default=200)
        p.add_argument("--window", type=int, default=5)
        p.add_argument("--epochs", type=int, default=5)
        p.add_argument("--min-count", type=int, default=3)
        p.add_argument("--sg", type=int, choices=(0, 1), default=0, help="0 = CBOW (default), 1 = skip-gram")
        p.add_argument("--workers", type=int, default=2)
        p.add_argument("--seed", type=int, default=42)
        p.add_argument("--bucket", type=int, default=200_000, help="FastText n-gram hash buckets")
        p.add_argument("--dtype", choices=("float16", "float32"), default="float16")
        p.add_argument("--job", action="store_true", help="queue a job on the cpu queue instead of running here")

    def handle(self, *args, **o):
        try:
            config = TrainConfig(language=o["language"], method=o["method"], unit=o["unit"], dim=o["dim"],
                                 window=o["window"], epochs=o["epochs"], min_count=o["min_count"], sg=o["sg"],
                                 workers=o["workers"], seed=o["seed"], bucket=o["bucket"], dtype=o["dtype"])
            model_store.check_model_name(o["name"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if o["job"]:
            from detection.jobs import TRAIN_EMBEDDINGS
            from detection.methods.semantic.word_vectors import resolve_corpus
            from jobs.services import job_create

            try:  # a job takes a registered corpus name only (what the web may pass too), never a path
                resolve_corpus(o["corpus"])
            except VectorsError as exc:
                raise CommandError(f"{exc}; with --job, --corpus is a name in the corpora directory") from exc
            job = job_create(kind=TRAIN_EMBEDDINGS,
                             params={"corpus": o["corpus"], "name": o["name"], "config": config.__dict__})
            self.stdout.write(f"queued job {job.pk}")
            return
        err = self.stderr
        progress = stderr_progress(err)
        try:
            manifest = train_and_save(o["corpus"], o["name"], config, progress=progress, log=err.write,
                                      models_dir=settings.MODELS_DIR,
                                      cache_dir=settings.VAR_DIR / "cache" / "lemmas")
        except (VectorsError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{o['name']}: {manifest['vocab_size']} units × {manifest['dim']}, "
                          f"{manifest['bytes'] / 2**20:.1f} MiB, trained in {manifest['train_seconds']} s")
