"""manage.py pretrain_encoder: pretrain a WordPiece tokenizer and a BERT masked-language model on a stored
corpus (a name in the corpora directory, never a path) and store it in the models directory under ``--name``.

Runs in the foreground with progress on stderr, or with ``--job`` as a ``pretrain_encoder`` job on the ``gpu``
queue. Either way a run interrupted (killed, a worker restarted) resumes from its last checkpoint when started
again with the same name and settings.
"""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.commands import stderr_progress
from detection.methods.infrastructure import model_store
from detection.methods.rerank.neural import TrainingFailed
from detection.methods.semantic.pretrain import (
    CLEANING,
    LANGUAGES,
    SIZES,
    PretrainConfig,
    PretrainError,
    corpus_path,
    pretrain,
)


class Command(BaseCommand):
    help = "Pretrain a BERT encoder (tokenizer + masked-language model) on a stored corpus, stored by name."
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, p):
        p.add_argument("--corpus", required=True, help="a stored corpus's name (a folder or archive in the corpora "
                                                       "directory, e.g. latin_library, grc_tesserae)")
        p.add_argument("--name", required=True, help="model name in the models directory (letters, digits, . _ -)")
        p.add_argument("--size", default="small", help=f"one of {', '.join(SIZES)}")
        p.add_argument("--language", default="la", help=f"one of {', '.join(LANGUAGES)}")
        p.add_argument("--steps", type=int, default=0, help="optimizer steps (0: the size's default)")
        p.add_argument("--batch-size", type=int, default=0, help="blocks per step (0: the size's default)")
        p.add_argument("--lr", type=float, default=0.0, help="peak learning rate (0: the size's default)")
        p.add_argument("--checkpoint-every", type=int, default=500)
        p.add_argument("--seed", type=int, default=42)
        p.add_argument("--max-lines", type=int, default=0, help="train on the corpus's first lines only (0: all)")
        p.add_argument("--stride", type=int, default=1, help="train on every n-th line (a sample of the corpus)")
        p.add_argument("--clean", default="auto", help=f"one of {', '.join(CLEANING)}")
        p.add_argument("--no-mixed-precision", action="store_true", help="full precision on CUDA too")
        p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N")
        p.add_argument("--job", action="store_true", help="queue a job on the gpu queue instead of running here")

    def handle(self, *args, **o):
        try:
            config = PretrainConfig(corpus=o["corpus"], size=o["size"], language=o["language"], steps=o["steps"],
                                    batch_size=o["batch_size"], lr=o["lr"], checkpoint_every=o["checkpoint_every"],
                                    seed=o["seed"], max_lines=o["max_lines"], stride=o["stride"],
                                    clean=o["clean"],
                                    mixed_precision=not o["no_mixed_precision"])
            model_store.check_model_name(o["name"])
            corpus_path(config.corpus)
        except ValueError as exc:  # PretrainError is one
            raise CommandError(str(exc)) from exc
        if o["job"]:
            from dataclasses import asdict

            from detection.jobs import PRETRAIN_ENCODER
            from jobs.services import job_create

            job = job_create(kind=PRETRAIN_ENCODER, params={"name": o["name"], "config": asdict(config)})
            self.stdout.write(f"queued job {job.pk} on the gpu queue")
            return
        err = self.stderr
        progress = stderr_progress(err)
        try:
            card = pretrain(config, o["name"], models_dir=settings.MODELS_DIR, device=o["device"],
                            progress=progress, log=err.write)
        except (PretrainError, TrainingFailed, RuntimeError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{o['name']}: {card['size']} {card['language']} encoder, {card['parameters']:,} "
                          f"parameters, {card['steps']} steps, final loss {card['final_loss']}, "
                          f"{card['seconds_per_step']} s/step on {card['device']}")
