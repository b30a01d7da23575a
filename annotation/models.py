"""Pairwise-comparison annotation: projects, verses, batches of candidate pairs, sets, judgements.

A batch is one reference verse and N candidates; its pairs are all N(N-1)/2 unordered candidate
pairs, stored canonically with verse_a.pk < verse_b.pk. Judgements record which candidate WON
(never "left"/"right" alone, which would make agreement meaningless under randomised order).
"""
from django.conf import settings
from django.db import models
from django.db.models import Q

DEFAULT_INSTRUCTIONS = "Select the verse that you consider more similar to the reference verse."


class Project(models.Model):
    class OverlapMode(models.TextChoices):
        INTER = "inter", "another annotator (inter-annotator agreement)"
        RETEST = "retest", "same annotator again (test–retest)"
        ADAPTIVE = "adaptive", "adaptive pair selection; another annotator judges the overlap pairs"

    name = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_projects")
    instructions = models.TextField(default=DEFAULT_INSTRUCTIONS, blank=True)
    set_size = models.PositiveSmallIntegerField(default=10)
    overlap_per_set = models.PositiveSmallIntegerField(default=3)
    overlap_mode = models.CharField(max_length=10, choices=OverlapMode.choices, default=OverlapMode.INTER)
    session_minutes = models.PositiveSmallIntegerField(null=True, blank=True, default=30)
    attention_per_set = models.PositiveSmallIntegerField(
        default=0, help_text="attention-check pairs mixed into each set (known answer, never scored)")
    set_timeout_minutes = models.PositiveSmallIntegerField(default=30)
    adaptive_explore_share = models.FloatField(
        default=0.2, help_text="adaptive mode: share of each set's new pairs drawn at random (exploration), 0–1")
    # The stop rule (adaptive mode, `annotation.stats.rank_claims.top_k_settled`): a batch takes no new pairs once the
    # posterior probability that its top `stop_top_k` hold ⌈stop_recall · k⌉ of the true top k (strengths closer
    # than `stop_margin` tied) reaches `stop_level`. No k: the rule is off.
    stop_top_k = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="adaptive mode: a batch takes no new pairs once its top k are settled")
    stop_recall = models.FloatField(default=0.9, help_text="share of the top k that must truly be among the top k")
    stop_margin = models.FloatField(default=0.5, help_text="strengths closer than this count as tied (logit scale)")
    stop_level = models.FloatField(default=0.95, help_text="posterior probability the stop rule asks for")
    stop_budget = models.PositiveIntegerField(
        null=True, blank=True, help_text="adaptive mode: a batch takes no new pairs after this many judgements")
    # Study set-up (all optional): consent, a training phase on known-answer pairs with feedback, a comprehension
    # check with two attempts; an annotator gets real pairs only once every step that is on is done (services/study.py).
    consent_text = models.TextField(blank=True, help_text="empty: no consent step")
    training_on = models.BooleanField(default=False, help_text="annotators first judge the training pairs, with feedback")
    check_on = models.BooleanField(default=False, help_text="annotators pass the comprehension check (two attempts)")
    check_pass_share = models.FloatField(default=0.8, help_text="share of check pairs right to pass (0–1]")
    archived_at = models.DateTimeField(null=True, blank=True, help_text="archived: no pairs served, everything kept")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(set_size__gte=1), name="project_set_size_positive"),
            models.CheckConstraint(condition=Q(overlap_per_set__lte=models.F("set_size")), name="project_overlap_le_set"),
            models.CheckConstraint(condition=Q(adaptive_explore_share__gte=0) & Q(adaptive_explore_share__lte=1),
                                   name="project_explore_share_0_1"),
            models.CheckConstraint(condition=Q(check_pass_share__gt=0) & Q(check_pass_share__lte=1),
                                   name="project_check_pass_share_0_1"),
            models.CheckConstraint(condition=Q(stop_recall__gt=0) & Q(stop_recall__lte=1) & Q(stop_margin__gte=0)
                                   & Q(stop_level__gte=0.5) & Q(stop_level__lt=1), name="project_stop_rule_ranges"),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator"
        LEAD = "lead"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ANNOTATOR)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique")]


class Verse(models.Model):
    """A verse, identified DBBE-style: "16977 1" is verse 1 of occurrence 16977."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="verses")
    verse_id = models.CharField(max_length=64)
    text = models.TextField()
    translation = models.TextField(blank=True)
    occurrence_id = models.CharField(max_length=32, blank=True)
    verse_number = models.PositiveIntegerField(null=True, blank=True)
    type_id = models.CharField(max_length=32, blank=True)
    group_id = models.CharField(max_length=32, blank=True, help_text="verse-variant group")
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "verse_id"], name="verse_unique_id")]

    def __str__(self) -> str:
        return self.verse_id


class Batch(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    reference = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="reference_of")
    pilot = models.BooleanField(default=False, help_text="every member judges every pair (full overlap)")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    n_candidates = models.PositiveIntegerField(default=0)
    n_pairs = models.PositiveIntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="batch_unique_name")]

    def __str__(self) -> str:
        return self.name


class BatchCandidate(models.Model):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="candidates")
    verse = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="candidate_in")
    position = models.PositiveIntegerField()
    gold_score = models.FloatField(null=True, blank=True, help_text="imported gold similarity, if any")

    class Meta:
        ordering = ["batch_id", "position"]
        constraints = [models.UniqueConstraint(fields=["batch", "verse"], name="candidate_unique")]


class Pair(models.Model):
    """An unordered candidate pair of a batch, verse_a.pk < verse_b.pk.

    `planned` judgements (1, or 2 for overlap pairs) and `taken` (assignments handed out and not
    released) bound how often the scheduler may serve the pair; `rank` is a random permutation
    fixed at creation, so serving in rank order is random yet needs no ORDER BY RANDOM().
    """

    # No single-column index on batch: pair_unique and both indexes below begin with batch_id.
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="pairs", db_index=False)
    verse_a = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    verse_b = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    rank = models.PositiveIntegerField()
    planned = models.PositiveSmallIntegerField(default=1)
    taken = models.PositiveSmallIntegerField(default=0)
    # first_annotator and attention_answer are indexed only where set (partial indexes below): a new pair has
    # neither, so a batch's insert adds no entries to them.
    first_annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    attention_answer = models.ForeignKey(
        Verse, null=True, blank=True, on_delete=models.PROTECT, related_name="+", db_index=False,
        help_text="set on attention-check pairs: the candidate an attentive annotator chooses; such pairs are "
                  "mixed into sets at the project's rate and never counted in scores or agreement")

    class Meta:
        ordering = ["batch_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "verse_a", "verse_b"], name="pair_unique"),
            models.CheckConstraint(condition=Q(verse_a__lt=models.F("verse_b")), name="pair_canonical_order"),
        ]
        indexes = [
            models.Index(fields=["batch", "taken", "rank"]), models.Index(fields=["batch", "planned", "taken"]),
            models.Index(fields=["first_annotator"], condition=Q(first_annotator__isnull=False), name="pair_first_annotator_set"),
            models.Index(fields=["attention_answer"], condition=Q(attention_answer__isnull=False), name="pair_attention_answer_set"),
        ]


class AnnotationSet(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        COMPLETED = "completed"
        EXPIRED = "expired"

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="sets")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotation_sets")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["batch", "annotator", "status"]), models.Index(fields=["status", "expires_at"])]


class Assignment(models.Model):
    """One presentation of a pair to an annotator, with the side each candidate was shown on."""

    class Status(models.TextChoices):
        OPEN = "open"
        DONE = "done"
        EXPIRED = "expired"

    set = models.ForeignKey(AnnotationSet, on_delete=models.CASCADE, related_name="assignments")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    left = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    is_overlap = models.BooleanField(default=False)
    is_repeat = models.BooleanField(default=False, help_text="second presentation in test–retest mode")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)

    class Meta:
        ordering = ["set_id", "position"]
        indexes = [models.Index(fields=["pair", "annotator"])]


class Judgement(models.Model):
    """The annotator's choice on one assignment. `client_uuid` makes a retried submit idempotent;
    at most one live (not undone) judgement exists per assignment."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="judgements")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgements")
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="judgements")
    batch = models.ForeignKey(Batch, on_delete=models.PROTECT, related_name="judgements")
    set = models.ForeignKey(AnnotationSet, on_delete=models.PROTECT, related_name="judgements")
    chosen = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    left = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    chose_left = models.BooleanField()
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    client_uuid = models.UUIDField(unique=True)
    created = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    after_close = models.BooleanField(  # db_default: the bulk writers' plain INSERTs leave it out
        default=False, db_default=False, help_text="stored after its batch closed, on a pair served to the annotator before the close")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment"], condition=Q(undone_at__isnull=True), name="one_live_judgement_per_assignment"
            )
        ]
        # (batch, undone_at, pair) covers the per-batch progress counts: no table row is read for them.
        indexes = [models.Index(fields=["batch", "undone_at", "pair"], name="judgement_batch_live_pair"),
                   models.Index(fields=["annotator", "created"])]


class Invitation(models.Model):
    """A link a lead hands out so that someone joins a project as an annotator without the admin
    site: opening it creates an account (or uses the logged-in one), grants the annotator role and
    adds the membership. The token is random (secrets.token_urlsafe); a link expires and can be
    revoked; ``max_uses`` bounds how many people may use one link."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveSmallIntegerField(default=1)
    uses = models.PositiveSmallIntegerField(default=0)
    revoked = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created"]


class AnalyticsBatchResult(models.Model):
    """One batch's part of an `annotation.analytics` job's result (the job's own result keeps the
    project-wide part: agreement, timeline, the batch index). The dashboard and the scores export
    read the batches they show, never the whole report."""

    job = models.ForeignKey("jobs.Job", on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(help_text="the batch's place in the report (by batch id)")
    row_offset = models.PositiveIntegerField(help_text="index of the batch's first score row in the project's table")
    n_rows = models.PositiveIntegerField()
    scores = models.JSONField(default=list, blank=True)
    triads = models.JSONField(default=list, blank=True, help_text="per annotator, with the listed cycles")
    details = models.JSONField(default=dict, blank=True, help_text="everything else computed per batch")

    class Meta:
        ordering = ["job_id", "position"]
        constraints = [models.UniqueConstraint(fields=["job", "batch"], name="analytics_piece_unique")]
        indexes = [models.Index(fields=["job", "row_offset"])]


class StudyItem(models.Model):
    """A known-answer pair of a project's study set-up: a training pair (the annotator is told whether they chose
    ``answer`` and why) or a comprehension-check pair (scored, no feedback per pair). Marked by the lead, or drawn
    from a batch's imported gold scores (``source``)."""

    class Kind(models.TextChoices):
        TRAINING = "training"
        CHECK = "check"

    class Source(models.TextChoices):
        MARKED = "marked", "marked by the lead"
        GOLD = "gold", "drawn from gold scores"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="study_items")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    reference = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    answer = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    other = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    explanation = models.TextField(blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.MARKED)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "kind", "id"]
        constraints = [models.UniqueConstraint(fields=["project", "kind", "reference", "answer", "other"],
                                               name="study_item_unique")]


class StudyProgress(models.Model):
    """Where one annotator stands in a project's study set-up; the dashboard's annotator table shows it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="study_progress")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    consented_at = models.DateTimeField(null=True, blank=True)
    training_done_at = models.DateTimeField(null=True, blank=True)
    training_correct = models.PositiveIntegerField(default=0)
    training_answered = models.PositiveIntegerField(default=0)
    check_attempts = models.PositiveSmallIntegerField(default=0)
    check_last_score = models.FloatField(null=True, blank=True)
    check_passed_at = models.DateTimeField(null=True, blank=True)
    check_retries = models.PositiveSmallIntegerField(default=0, help_text="times the lead allowed new attempts")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="study_progress_unique")]


class StudyAnswer(models.Model):
    """One answer to a study pair: ``attempt`` 0 for training, 1 or 2 for the comprehension check."""

    progress = models.ForeignKey(StudyProgress, on_delete=models.CASCADE, related_name="answers")
    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="+")
    attempt = models.PositiveSmallIntegerField()
    chosen = models.ForeignKey(Verse, on_delete=models.PROTECT, related_name="+")
    correct = models.BooleanField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["progress", "item", "attempt"], name="study_answer_unique")]
