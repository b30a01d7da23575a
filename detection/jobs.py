"""Job kinds of the detection app: training word vectors on a registered corpus (``cpu`` queue) and pretraining
an encoder on a stored corpus (``gpu`` queue)."""
from django.conf import settings

from detection.methods.infrastructure import model_store
from detection.methods.semantic.pretrain import PretrainConfig, PretrainError, pretrain
from detection.methods.semantic.word_vectors import TrainConfig, VectorsError, resolve_corpus, train_and_save
from jobs.registry import job_kind

TRAIN_EMBEDDINGS = "train_embeddings"
PRETRAIN_ENCODER = "pretrain_encoder"


@job_kind(TRAIN_EMBEDDINGS, queue="cpu", description="Train word vectors on a registered corpus and store them "
          "under a model name.")
def train_embeddings(job, *, corpus: str, name: str, config: dict | None = None) -> dict:
    """``corpus``: a registered corpus name (never a path); ``config``: :class:`TrainConfig` fields."""
    try:
        cfg = TrainConfig(**(config or {}))
    except TypeError as exc:
        raise VectorsError(f"unknown training option: {exc}") from None
    model_store.check_model_name(name)
    path = resolve_corpus(corpus)
    job.log(f"training {cfg.method} ({'skip-gram' if cfg.sg else 'CBOW'}) on {cfg.unit}s of corpus {corpus!r}, "
            f"dim {cfg.dim}, {cfg.epochs} epochs, seed {cfg.seed}")
    manifest = train_and_save(path, name, cfg, progress=job.progress, log=job.log, corpus_label=corpus,
                              models_dir=settings.MODELS_DIR, cache_dir=settings.VAR_DIR / "cache" / "lemmas")
    return {"model": name, "vocab_size": manifest["vocab_size"], "dim": manifest["dim"], "bytes": manifest["bytes"],
            "train_seconds": manifest["train_seconds"], "corpus": manifest["corpus"], "versions": manifest["versions"]}


@job_kind(PRETRAIN_ENCODER, queue="gpu", description="Pretrain a WordPiece tokenizer and a BERT masked-language "
          "model on a stored corpus and store it under a model name (resumes from its last checkpoint).")
def pretrain_encoder(job, *, name: str, config: dict) -> dict:
    """``config``: :class:`PretrainConfig` fields (``corpus`` a stored corpus's name, never a path). A job sent
    again after its worker died resumes from the run's last checkpoint in the models directory."""
    try:
        cfg = PretrainConfig(**config)
    except TypeError as exc:
        raise PretrainError(f"unknown pretraining option: {exc}") from None
    model_store.check_model_name(name)
    job.log(f"pretraining a {cfg.size} {cfg.language} encoder {name!r} on corpus {cfg.corpus!r}: "
            f"{cfg.shape['steps']} steps, seed {cfg.seed}, checkpoint every {cfg.checkpoint_every} steps")
    card = pretrain(cfg, name, models_dir=settings.MODELS_DIR, progress=job.progress, log=job.log)
    return {"model": name, **{k: card[k] for k in ("size", "language", "steps", "final_loss", "device",
                                                   "mixed_precision", "parameters", "seconds_per_step", "corpus",
                                                   "versions")}}


@job_kind("detection.build_corpus_index", queue="cpu", description="Build (or extend) a search corpus's index "
          "from a shipped source (the Tesserae Latin texts).")
def build_corpus_index(job, *, corpus: str, source: str, subset: str = "all", extend: bool = False) -> dict:
    """``source``: a shipped source's name (never a path)."""
    from detection.services.corpora import corpus_build, source_path

    return corpus_build(name=corpus, path=source_path(source), subset=subset, extend=extend,
                        progress=job.progress, log=job.log, job_id=job.id)
