"""The researcher workbench: documents a researcher uploads (or copies from a stored corpus), detection
runs between two documents, the candidate pairs they propose, and the verdicts philologists give them."""
from django.conf import settings
from django.db import models

from detection.models import config_json, config_params, config_read


class Document(models.Model):
    """A text as segments: uploaded by a researcher, or a copy of a stored benchmark corpus (shared)."""

    class Format(models.TextChoices):
        CSV = "csv", "CSV seg_id,text"
        TESS = "tess", "Tesserae .tess"
        TEI = "tei", "TEI / EpiDoc"
        PLAIN = "plain", "plain text"
        CORPUS = "corpus", "stored corpus"

    name = models.CharField(max_length=200)
    format = models.CharField(max_length=10, choices=Format.choices)
    language = models.CharField(max_length=10, default="la")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    corpus = models.OneToOneField("benchmarks.Corpus", null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="workbench_document")
    n_segments = models.PositiveIntegerField(default=0)
    provenance = models.JSONField(default=dict, blank=True)  # file name, bytes, sha256, format
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return self.name


class DocumentSegment(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="segments")
    position = models.PositiveIntegerField()
    seg_id = models.CharField(max_length=300)
    author = models.CharField(max_length=100, blank=True)
    work = models.CharField(max_length=200, blank=True)
    text = models.TextField()

    class Meta:
        ordering = ["document_id", "position"]
        constraints = [models.UniqueConstraint(fields=["document", "seg_id"], name="workbench_segment_doc_seg")]
        indexes = [models.Index(fields=["document", "position"], name="wb_segment_doc_pos")]

    def __str__(self) -> str:
        return self.seg_id


class DetectionRun(models.Model):
    """Retrieve (and optionally rerank) every segment of the query document against the source document."""

    name = models.CharField(max_length=200, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    query_document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    source_document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    # the configurations' names, set on save: for filtering and lists
    retriever = models.CharField(max_length=100)
    reranker = models.CharField(max_length=100, blank=True)
    # each method with its params as one MethodConfig.to_json() (name, kind, params, digest); None without a reranker
    retriever_config = models.JSONField(null=True, blank=True)
    reranker_config = models.JSONField(null=True, blank=True)
    top_k = models.PositiveIntegerField(default=10)
    unit = models.CharField(max_length=20, default="line")  # the segments, sliding windows of 2-3 of them, sentences
    min_score = models.FloatField(null=True, blank=True)
    thresholds = models.JSONField(default=dict, blank=True)  # {"cit.": 0.5, "cf.": 0.5}
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    summary = models.JSONField(default=dict, blank=True)  # counts and timings once finished
    notes = models.JSONField(default=list, blank=True)  # what the run changed from the request (a missing default)
    # the owner's last "re-rank with my verdicts" (workbench.engine.verdict_fit's Refit.to_json() and its job)
    refit = models.JSONField(default=dict, blank=True)
    refit_job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return self.name or f"Detection {self.pk}"

    @property
    def status(self) -> str:
        return self.job.status if self.job_id else "queued"

    @property
    def retriever_method_config(self):
        """The retriever's configuration as the row stored it, its digest checked."""
        return config_read(self.retriever_config)

    @property
    def reranker_method_config(self):
        """The reranker's configuration as the row stored it, its digest checked (None without a reranker)."""
        return config_read(self.reranker_config)

    @property
    def retriever_config_params(self) -> dict:
        """The retriever's parameters as its stored configuration holds them (the digest checked)."""
        return config_params(self.retriever_config)

    @property
    def reranker_config_params(self) -> dict:
        """The reranker's parameters as its stored configuration holds them ({} without a reranker)."""
        return config_params(self.reranker_config)

    def save(self, *args, **kwargs):
        if self.retriever_config is None:  # a row made without its service (a test, the admin): the defaults
            self.retriever_config = config_json(self.retriever, "retriever")
        if self.reranker_config is None:
            self.reranker_config = config_json(self.reranker, "reranker")
        self.retriever = self.retriever_config["name"]
        self.reranker = self.reranker_config["name"] if self.reranker_config else ""
        super().save(*args, **kwargs)


class Candidate(models.Model):
    """One proposed parallel: a query segment, a source segment, its rank and scores."""

    class Label(models.TextChoices):
        CIT = "cit.", "cit. (quotation)"
        CF = "cf.", "cf. (allusion)"
        NONE = "", "no parallel"

    run = models.ForeignKey(DetectionRun, on_delete=models.CASCADE, related_name="candidates")
    query = models.ForeignKey(DocumentSegment, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(DocumentSegment, on_delete=models.CASCADE, related_name="+")
    query_position = models.PositiveIntegerField()  # the query's position, for ordering without a join
    rank = models.PositiveIntegerField()
    score = models.FloatField()
    p_none = models.FloatField(null=True, blank=True)
    p_cit = models.FloatField(null=True, blank=True)
    p_cf = models.FloatField(null=True, blank=True)
    label = models.CharField(max_length=5, choices=Label.choices, blank=True)
    shared_lemmas = models.PositiveSmallIntegerField(default=0)
    bucket = models.CharField(max_length=12, blank=True)  # detection.latin.overlap.BUCKETS
    # why the engine proposed it: {"channels": [{"name", "score", "weight", "contribution", "matches": [[q, s]]}],
    # "uniqueness": int | None, "rarity": {word: float}, "query_lines": [...], "source_lines": [...]}; {} = none
    explain = models.JSONField(default=dict, db_default={}, blank=True)  # db default: rows inserted by SQL
    refit_score = models.FloatField(null=True, blank=True)  # the order after re-ranking with the owner's verdicts

    class Meta:
        ordering = ["run_id", "query_position", "rank"]
        indexes = [models.Index(fields=["run", "query_position", "rank"], name="wb_cand_run_order"),
                   models.Index(fields=["run", "label"], name="wb_cand_run_label"),
                   models.Index(fields=["run", "bucket"], name="wb_cand_run_bucket"),
                   models.Index(fields=["run", "-score", "query_position", "rank"], name="wb_cand_run_score"),
                   models.Index(fields=["run", "-refit_score", "query_position", "rank"], name="wb_cand_run_refit")]

    def __str__(self) -> str:
        return f"{self.query_id} → {self.source_id} #{self.rank}"


class Verdict(models.Model):
    """A philologist's decision on a candidate: confirmed as cit. or cf., rejected, or unsure; one per person
    and candidate (a new decision replaces the old one and keeps when it was changed)."""

    class Decision(models.TextChoices):
        CIT = "cit.", "confirmed: cit. (quotation)"
        CF = "cf.", "confirmed: cf. (allusion)"
        REJECTED = "rejected", "rejected"
        UNSURE = "unsure", "unsure"

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="verdicts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decision = models.CharField(max_length=10, choices=Decision.choices)
    note = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["candidate_id", "-updated"]
        constraints = [models.UniqueConstraint(fields=["candidate", "user"], name="workbench_verdict_once")]

    def __str__(self) -> str:
        return f"{self.decision} on {self.candidate_id} by {self.user_id}"
