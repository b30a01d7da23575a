"""Benchmarks: Loci Similes gold references (Latin) and graded similarity gold sets (Greek STS), plus the
evaluation runs measured against them. Numbers are computed by the pure packages `benchmarks.loci` and
`benchmarks.greek_sts`; these models only hold their inputs and reports."""
from django.conf import settings
from django.db import models

from detection.models import config_json, config_params, config_read


class Corpus(models.Model):
    """A set of text segments on one side of a benchmark: the later texts (query) or the earlier (source)."""

    class Side(models.TextChoices):
        QUERY = "query"
        SOURCE = "source"

    name = models.CharField(max_length=200)
    side = models.CharField(max_length=10, choices=Side.choices)
    description = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["name", "side"], name="benchmarks_corpus_name_side")]
        verbose_name_plural = "corpora"

    def __str__(self) -> str:
        return f"{self.name} ({self.side})"


class Segment(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="segments")
    seg_id = models.CharField(max_length=300)
    author = models.CharField(max_length=100, blank=True)
    work = models.CharField(max_length=200, blank=True)
    citation = models.CharField(max_length=100, blank=True)
    text = models.TextField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["corpus", "seg_id"], name="benchmarks_segment_corpus_seg")]
        ordering = ["corpus_id", "id"]

    def __str__(self) -> str:
        return self.seg_id


class Benchmark(models.Model):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class BenchmarkVersion(models.Model):
    """One frozen release of a benchmark: its two corpora and its gold references."""

    benchmark = models.ForeignKey(Benchmark, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=50)
    description = models.TextField(blank=True)
    provenance = models.JSONField(default=dict, blank=True)  # files, row counts, fold conflicts, loader notes
    query_corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="+")
    source_corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    # A version promoted from a workbench run by someone who is not a lead waits for a lead's approval:
    # until then only its proposer (and leads, staff) see it (benchmarks.selectors.versions_visible_to).
    awaiting_approval = models.BooleanField(default=False)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["benchmark", "version"], name="benchmarks_version_unique")]
        ordering = ["benchmark__name", "-created"]

    def __str__(self) -> str:
        return f"{self.benchmark.name} v{self.version}"


class GoldReference(models.Model):
    """One expert-verified reference: the query segment refers to the source segment."""

    class RefType(models.TextChoices):
        CIT = "cit.", "cit. (quotation)"
        CF = "cf.", "cf. (allusion)"
        LINK = "link", "link (type unknown)"

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="gold")
    pair_id = models.CharField(max_length=50, blank=True)
    query = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="+")
    source = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="+")
    ref_type = models.CharField(max_length=5, choices=RefType.choices, default=RefType.LINK)
    fold = models.SmallIntegerField(null=True, blank=True)
    provenance = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["version_id", "id"]
        indexes = [
            models.Index(fields=["version", "fold"], name="bm_gold_version_fold"),
            models.Index(fields=["version", "ref_type"], name="bm_gold_version_type"),
        ]

    def __str__(self) -> str:
        return f"{self.query_id} → {self.source_id} ({self.ref_type})"


class _Run(models.Model):
    """What every run shares: who asked, the job that computes it, and the code that did."""

    method = models.CharField(max_length=100)  # the configuration's name, set on save: for filtering and lists
    # the method and its parameters as one MethodConfig.to_json() (name, kind, params, digest): `method_config`
    config = models.JSONField(null=True, blank=True)
    code_version = models.CharField(max_length=100, blank=True)
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    report = models.JSONField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created", "-id"]

    CONFIG_KIND = "pair_scorer"  # the registry kind of ``method``

    @property
    def method_config(self):
        """The method's configuration as the row stored it, its digest checked."""
        return config_read(self.config)

    @property
    def config_params(self) -> dict:
        """The method's parameters as its stored configuration holds them (the digest checked)."""
        return config_params(self.config)

    def save(self, *args, **kwargs):
        if self.config is None:  # a row made without its service (a test, the admin): its method's defaults
            self.config = config_json(self.method, self.CONFIG_KIND)
        self.method = self.config["name"]
        super().save(*args, **kwargs)

    @property
    def status(self) -> str:
        """The job's status; without a job, "succeeded" when a report is stored, else "queued".

        Selectors that defer `report` annotate `has_report` so that this reads no deferred field."""
        if self.job_id:
            return self.job.status
        has_report = getattr(self, "has_report", None)
        if has_report is None:
            has_report = self.report is not None
        return "succeeded" if has_report else "queued"


LOCI_KIND = "benchmarks.loci_evaluate"  # the evaluation job's kind (its shards: LOCI_KIND + ".shard")


class EvaluationRun(_Run):
    """A retrieval (and optionally rerank) evaluation of one method on one benchmark version."""

    class Split(models.TextChoices):
        FILE = "file", "folds given in the file"
        GROUPED = "grouped", "grouped k-fold by query (seeded)"

    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="runs")
    reranker = models.CharField(max_length=100, blank=True)  # the reranker configuration's name, set on save
    reranker_config = models.JSONField(null=True, blank=True)  # MethodConfig.to_json() of reranker; None without one
    split = models.CharField(max_length=10, choices=Split.choices, default=Split.FILE)
    n_folds = models.PositiveSmallIntegerField(default=5)
    ks = models.JSONField(default=list, blank=True)
    seed = models.IntegerField(default=0)
    # what the texts are searched as (core.run_limits.EVALUATION_UNIT): the segments, windows of 2-3, sentences
    unit = models.CharField(max_length=20, default="line")
    summary = models.JSONField(default=dict, blank=True)  # leaderboard figures: recall@k, mrr@k, …
    per_fold = models.JSONField(default=list, blank=True)
    per_query = models.JSONField(default=list, blank=True)
    # each query's ranked list to the run's depth, {query_id: [[source_id, score], …]} best first (the TREC
    # export); deferred by the selectors: only the export reads it
    ranked = models.JSONField(default=dict, blank=True)

    class Meta(_Run.Meta):
        indexes = [models.Index(fields=["version", "-created"], name="bm_evalrun_version_created")]

    CONFIG_KIND = "retriever"

    @property
    def reranker_method_config(self):
        """The reranker's configuration as the row stored it, its digest checked (None without a reranker)."""
        return config_read(self.reranker_config)

    @property
    def reranker_config_params(self) -> dict:
        """The reranker's parameters as its stored configuration holds them ({} without a reranker)."""
        return config_params(self.reranker_config)

    def save(self, *args, **kwargs):
        if self.reranker_config is None:
            self.reranker_config = config_json(self.reranker, "reranker")
        self.reranker = self.reranker_config["name"] if self.reranker_config else ""
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"Run {self.pk} {self.method} on {self.version_id}"


class GoldSimilaritySet(models.Model):
    """Graded similarity gold: reference verse → candidate verse → score in [0, 1]."""

    class Source(models.TextChoices):
        FILE = "file"
        ANNOTATION = "annotation", "annotation batch"

    name = models.CharField(max_length=200, unique=True)
    source = models.CharField(max_length=12, choices=Source.choices, default=Source.FILE)
    source_description = models.TextField(blank=True)
    provenance = models.JSONField(default=dict, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    # A set made from an annotation batch carries that project's verses and judgements: reading it follows
    # the project's rules (its leads, researchers, staff) until a lead of the project publishes it.
    source_project = models.ForeignKey("annotation.Project", null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="gold_sets")
    published = models.BooleanField(default=False)
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def restricted(self) -> bool:
        """True while the set is readable only under its source project's rules."""
        return self.source == self.Source.ANNOTATION and not self.published


class GoldSimilarityPair(models.Model):
    gold_set = models.ForeignKey(GoldSimilaritySet, on_delete=models.CASCADE, related_name="pairs")
    position = models.PositiveIntegerField(default=0)  # order in the file / batch
    reference_id = models.CharField(max_length=100)
    reference_text = models.TextField()
    candidate_id = models.CharField(max_length=100)
    candidate_text = models.TextField()
    score = models.FloatField()

    class Meta:
        ordering = ["gold_set_id", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["gold_set", "reference_id", "candidate_id"],
                                               name="benchmarks_goldpair_unique")]

    def __str__(self) -> str:
        return f"{self.reference_id} → {self.candidate_id} = {self.score:.3f}"


class SimilarityRun(_Run):
    gold_set = models.ForeignKey(GoldSimilaritySet, on_delete=models.CASCADE, related_name="runs")
    calibration = models.CharField(max_length=10, blank=True)  # "", "linear", "isotonic"
    rmse = models.FloatField(null=True, blank=True)
    spearman = models.FloatField(null=True, blank=True)
    pearson = models.FloatField(null=True, blank=True)

    class Meta(_Run.Meta):
        indexes = [models.Index(fields=["gold_set", "-created"], name="bm_simrun_set_created")]

    def __str__(self) -> str:
        return f"Similarity run {self.pk} {self.method} on {self.gold_set_id}"


class PilotRun(_Run):
    """A DBBE pilot: precision/recall/F1 of 'score ≥ threshold' for verse variants or types."""

    class Level(models.TextChoices):
        VERSE = "verse"
        TYPE = "type"

    verses_file = models.CharField(max_length=500)
    level = models.CharField(max_length=5, choices=Level.choices, default=Level.VERSE)
    rows = models.JSONField(default=list, blank=True)
    best_threshold = models.FloatField(null=True, blank=True)
    best_f1 = models.FloatField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Pilot {self.pk} {self.method} ({self.level})"

    @property
    def verses_name(self) -> str:
        """The verses file's name (the stored path is the server's business)."""
        return self.verses_file.replace("\\", "/").rsplit("/", 1)[-1]
