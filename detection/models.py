"""Trained models as artifacts: what was trained, from what, on which folds, where its files are, how it scored.

A row is written only after the model's files are complete in the models directory (``MODELS_DIR``), in the same
transaction that records the training job's outcome, so a failed or cancelled training leaves no half-registered
model. ``name`` is what users pass as a method's ``model`` parameter (resolved by
:mod:`detection.methods.infrastructure.model_store`, never a path).
"""
from django.conf import settings
from django.db import models

from detection.methods.specs import MethodConfig


def config_json(name: str, kind: str, params=None) -> dict | None:
    """``registry.configure(...).to_json()`` (name, kind, validated parameters with defaults and their digest):
    what a row made without its service stores; None without a method (a run with no reranker)."""
    from detection.methods.registry import configure

    return configure(name, params or {}, kind=kind).to_json() if name else None


def config_read(data) -> MethodConfig | None:
    """A row's stored configuration, its digest checked (``MethodConfig.from_json``: a row edited since is refused,
    not built); None when the row has no such method."""
    return MethodConfig.from_json(data) if data else None


def config_params(data) -> dict:
    """The parameters a row's method ran with, read from its stored configuration (the digest checked): what pages
    and exports show, the one source; ``{}`` when the row has no such method."""
    config = config_read(data)
    return dict(config.params) if config is not None else {}


class TrainedModel(models.Model):
    class Kind(models.TextChoices):
        BI_ENCODER = "bi-encoder"
        CROSS_ENCODER = "cross-encoder"
        FEATURE_CLASSIFIER = "feature-classifier"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    method = models.CharField(max_length=100, blank=True, help_text="the registered method that uses it")
    base_model = models.CharField(max_length=200, blank=True, help_text="hub id or local name it started from")
    training_job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    benchmark = models.CharField(max_length=200, blank=True, help_text="benchmark name and version trained on")
    train_folds = models.JSONField(default=list, blank=True)
    held_out_fold = models.IntegerField(null=True, blank=True)
    params = models.JSONField(default=dict, blank=True)
    # a feature classifier's method and params as one MethodConfig.to_json() (name, kind, params, digest); None
    # for a neural model, whose params are its trainer's options, not a method's parameters
    config = models.JSONField(null=True, blank=True)
    files = models.JSONField(default=list, blank=True, help_text="paths relative to the model's folder")
    metrics = models.JSONField(default=dict, blank=True)
    versions = models.JSONField(default=dict, blank=True)
    seed = models.IntegerField(default=0)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    @property
    def method_config(self) -> MethodConfig | None:
        """The configuration the model was trained as, its digest checked (None for a neural model)."""
        return config_read(self.config)

    def save(self, *args, **kwargs):
        if self.config is None and self.kind == self.Kind.FEATURE_CLASSIFIER:
            self.config = config_json(self.method, "reranker", self.params)
        super().save(*args, **kwargs)


class SearchCorpus(models.Model):
    """A corpus one passage is searched against (e.g. the Tesserae Latin texts): its works are rows, its segments
    (texts, citations) and every channel's features live in the on-disk index ``VAR_DIR/corpora/<name>/``
    (:mod:`detection.channels.corpus_index`), stamped with the analyser's and the method configuration's digest."""

    class Status(models.TextChoices):
        EMPTY = "empty"
        BUILDING = "building"
        READY = "ready"
        FAILED = "failed"

    name = models.SlugField(max_length=60, unique=True)
    description = models.TextField(blank=True)
    language = models.CharField(max_length=10, default="la")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.EMPTY)
    config = models.JSONField(default=dict, blank=True, help_text="the channels method's MethodConfig.to_json()")
    digest = models.CharField(max_length=64, blank=True, help_text="analyser + configuration digest of the index")
    n_segments = models.IntegerField(default=0)
    index_bytes = models.BigIntegerField(default=0)
    build_job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    report = models.JSONField(default=dict, blank=True, help_text="the last build: seconds, skipped lines")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "search corpora"

    def __str__(self) -> str:
        return self.name


class CorpusWork(models.Model):
    """One work of a search corpus: its segments are rows ``start .. start + n_segments - 1`` of the index."""

    class Genre(models.TextChoices):
        VERSE = "verse"
        PROSE = "prose"

    corpus = models.ForeignKey(SearchCorpus, on_delete=models.CASCADE, related_name="works")
    key = models.CharField(max_length=200, help_text="the file's name: vergil.aeneid")
    author = models.CharField(max_length=100)
    title = models.CharField(max_length=200)
    cite = models.CharField(max_length=100, blank=True, help_text="citation prefix: verg. aen.")
    genre = models.CharField(max_length=10, choices=Genre.choices)
    start = models.IntegerField()
    n_segments = models.IntegerField()

    class Meta:
        ordering = ["corpus_id", "start"]
        constraints = [models.UniqueConstraint(fields=["corpus", "key"], name="detection_corpuswork_unique")]

    def __str__(self) -> str:
        return self.key
