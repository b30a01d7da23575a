"""Reads of the benchmarks app: versions, gold, runs, leaderboards, and the method registries."""
from __future__ import annotations

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from annotation.models import Membership
from benchmarks.models import (
    LOCI_KIND,
    BenchmarkVersion,
    EvaluationRun,
    GoldReference,
    GoldSimilarityPair,
    GoldSimilaritySet,
    PilotRun,
    Segment,
    SimilarityRun,
)
from core.roles import LEAD, RESEARCHER, has_role

_HAS_REPORT = ExpressionWrapper(Q(report__isnull=False), output_field=BooleanField())


# ----------------------------------------------------------------------------------------- registries
def benchmark_version_named(name: str, version: str | None = None):
    """The latest version of benchmark ``name`` (or that ``version``), or None."""
    from benchmarks.models import BenchmarkVersion

    versions = BenchmarkVersion.objects.filter(benchmark__name=name).order_by("-created")
    if version:
        versions = versions.filter(version=version)
    return versions.first()


def method_specs(kind: str | None = None, language: str | None = None) -> list[dict]:
    """Declarations of the registered detection methods (``detection.methods.registry``)."""
    from detection.methods import registry

    return [spec.as_dict() for spec in registry.specs(kind, language)]


def method_queue(name: str) -> str:
    """The queue a method's jobs go to, from its declaration (``needs_gpu``)."""
    from detection.methods import registry

    return registry.get_spec(name).queue


def retrieval_method_names() -> list[str]:
    """The registered retrievers."""
    from detection.methods import registry

    return sorted(registry.names(kind="retriever"))


def similarity_method_specs() -> list[dict]:
    from detection.methods.greek.greek_registry import method_specs as greek_specs

    return greek_specs()


def similarity_method_names() -> list[str]:
    return [spec["name"] for spec in similarity_method_specs()]


def similarity_method_needs_model(name: str) -> bool:
    return any(spec["name"] == name and spec["needs_model"] for spec in similarity_method_specs())


# ------------------------------------------------------------------------------------- Loci Similes
def versions_visible_to(user) -> QuerySet[BenchmarkVersion]:
    """Every approved version; a version awaiting approval only to its proposer, leads and staff."""
    qs = BenchmarkVersion.objects.all()
    if has_role(user, LEAD):
        return qs
    return qs.filter(Q(awaiting_approval=False) | Q(proposed_by_id=getattr(user, "pk", None) or 0))


def version_ids_hidden_from(user) -> list[int]:
    """Ids of the versions `user` may not read (usually none)."""
    return list(BenchmarkVersion.objects.exclude(pk__in=versions_visible_to(user).values("pk"))
                .values_list("pk", flat=True))


def trained_models_hidden_from(user) -> set[str]:
    """Names of the trained models learnt from a version `user` may not read (another user's version awaiting
    approval: its gold is in them), each as stored (``NAME/fold-0``, ``NAME/all``) and as its ``NAME``."""
    from detection.models import TrainedModel

    hidden_versions = version_ids_hidden_from(user)
    if not hidden_versions:
        return set()
    names = TrainedModel.objects.filter(training_job__params__version_id__in=hidden_versions).values_list(
        "name", flat=True)
    return {n for name in names for n in (name, name.split("/", 1)[0])}


class HiddenFromUser:
    """What `user` may not read of the benchmarks, for telling whether a job is about it: another user's version
    awaiting approval (by id, and as the suite's ``stored:NAME@VERSION``) and every model learnt from one. Empty
    (and no further query) for leads, staff and whenever no version awaits approval."""

    def __init__(self, user):
        self.versions = set(version_ids_hidden_from(user))
        self.names: set[str] = set()
        if self.versions:
            from benchmarks.suite.suite_commands import stored_key

            self.names = {stored_key(v) for v in BenchmarkVersion.objects.filter(pk__in=self.versions)
                          .select_related("benchmark")} | trained_models_hidden_from(user)

    def hides(self, job) -> bool:
        """True when `job` refers to something hidden: an evaluation (or a shard of one) on a hidden version, a
        training on one, a suite over one, or any job naming a model learnt from one (as a first stage, a
        reranker, a base model)."""
        if not self.versions:
            return False
        params = job.params if isinstance(job.params, dict) else {}
        version_id, run_id = params.get("version_id"), params.get("run_id")
        if isinstance(version_id, int) and version_id in self.versions:
            return True
        stack: list = [params]
        if job.kind.startswith(LOCI_KIND) and isinstance(run_id, int):  # the run holds its version and models
            run = EvaluationRun.objects.filter(pk=run_id).values("version_id", "config", "reranker_config").first()
            if run and run.pop("version_id") in self.versions:
                return True
            stack.append(run)
        while stack:  # every string the job carries (the suite's benchmark keys, model names in configurations)
            item = stack.pop()
            if isinstance(item, str) and item in self.names:
                return True
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return False


def jobs_visible_to(user, jobs, *, limit: int = 10) -> list:
    """The first `limit` of `jobs` (a queryset, newest first) that are about nothing hidden from `user`."""
    hidden = HiddenFromUser(user)
    if not hidden.versions:
        return list(jobs[:limit])
    return [job for job in jobs[:limit * 20] if not hidden.hides(job)][:limit]


def trained_models_visible_to(user, *, kind: str | None = None):
    """The trained-model registry (`detection.selectors.trained_model_list`) less the models hidden from `user`."""
    from detection.selectors import trained_model_list

    hidden = trained_models_hidden_from(user)
    return trained_model_list(kind=kind).exclude(name__in=hidden) if hidden else trained_model_list(kind=kind)


def version_list(*, user) -> QuerySet[BenchmarkVersion]:
    return (versions_visible_to(user).select_related("benchmark")
            .annotate(n_gold=Count("gold", distinct=True), n_runs=Count("runs", distinct=True))
            .order_by("benchmark__name", "-created", "-id"))


def segments_of(*, corpus_id: int) -> QuerySet[Segment]:
    return Segment.objects.filter(corpus_id=corpus_id).order_by("id")


def segment_texts(*, corpus_id: int, seg_ids) -> dict[str, str]:
    """seg_id → text for the given ids of one corpus (one query)."""
    return dict(Segment.objects.filter(corpus_id=corpus_id, seg_id__in=list(set(seg_ids))).values_list("seg_id", "text"))


def gold_list(*, version: BenchmarkVersion, fold: int | None = None, ref_type: str | None = None):
    qs = GoldReference.objects.filter(version=version).select_related("query", "source")
    if fold is not None:
        qs = qs.filter(fold=fold)
    if ref_type:
        qs = qs.filter(ref_type=ref_type)
    return qs


def gold_overview(*, version: BenchmarkVersion) -> dict:
    """Counts per fold and type (the shape of the paper's Table 4 for the positives)."""
    rows = (GoldReference.objects.filter(version=version).values("fold")
            .annotate(refs=Count("id"), cit=Count("id", filter=Q(ref_type="cit.")),
                      cf=Count("id", filter=Q(ref_type="cf.")), link=Count("id", filter=Q(ref_type="link")),
                      queries=Count("query", distinct=True), sources=Count("source", distinct=True))
            .order_by("fold"))
    rows = list(rows)
    total = GoldReference.objects.filter(version=version).aggregate(
        refs=Count("id"), cit=Count("id", filter=Q(ref_type="cit.")), cf=Count("id", filter=Q(ref_type="cf.")),
        link=Count("id", filter=Q(ref_type="link")), queries=Count("query", distinct=True),
        sources=Count("source", distinct=True))
    return {
        "folds": rows,
        "total": total,
        "n_query_segments": Segment.objects.filter(corpus_id=version.query_corpus_id).count(),
        "n_source_segments": Segment.objects.filter(corpus_id=version.source_corpus_id).count(),
    }


def runs_visible_to(user) -> QuerySet[EvaluationRun]:
    """Evaluation runs on the versions `user` may read (`versions_visible_to`): a run on another user's version
    awaiting approval is as absent as a run that does not exist."""
    return EvaluationRun.objects.filter(version__in=versions_visible_to(user)).defer("ranked")


def run_list(*, version: BenchmarkVersion | None = None, user=None) -> QuerySet[EvaluationRun]:
    """Evaluation runs (of `version`); only runs on versions `user` may read when a user is given."""
    qs = (runs_visible_to(user) if user is not None else EvaluationRun.objects.all()).select_related(
        "job", "owner", "version__benchmark").defer("report", "per_query", "per_fold", "ranked").annotate(has_report=_HAS_REPORT)
    return qs.filter(version=version) if version is not None else qs


def run_pools(*, version: BenchmarkVersion) -> dict[int, str]:
    """Run id → the pool it ranked against, for the finished runs of a version (one query).

    The pool is `summary["pool"]`; runs from before the choice existed take their report's pool kind."""
    rows = EvaluationRun.objects.filter(version=version, report__isnull=False).values_list(
        "pk", "summary__pool", "report__pool__kind")
    return {pk: pool or kind or "gold" for pk, pool, kind in rows}


def leaderboard(*, version: BenchmarkVersion, sort: str = "recall@10", pool: str | None = None) -> list[EvaluationRun]:
    """Finished runs of a version on one `pool`, best first by `sort` (a key of `EvaluationRun.summary`).

    Runs on different pools are never ranked together: `pool` None means "gold"."""
    pools = run_pools(version=version)
    pool = pool or "gold"
    runs = [r for r in run_list(version=version).filter(report__isnull=False) if pools.get(r.pk) == pool]

    def key(run):
        value = run.summary.get(sort)
        return (value is None, -(value or 0.0), run.pk)

    return sorted(runs, key=key)


# ------------------------------------------------------------------------------------------ Greek STS
def _gold_sets_readable_q(user) -> Q | None:
    """None when `user` reads every gold set; else the condition on the sets they may read.

    Sets from files, and published sets, are for every researcher and lead. A set made from an annotation
    batch and not published follows its source project's rules: the project's leads (and researchers and
    staff, who may read every project's results)."""
    if user.is_staff or has_role(user, RESEARCHER):
        return None
    open_sets = ~Q(source=GoldSimilaritySet.Source.ANNOTATION) | Q(published=True)
    if not has_role(user, LEAD):
        return open_sets
    return open_sets | Q(source_project__owner=user) | Q(
        source_project__memberships__user=user, source_project__memberships__role=Membership.Role.LEAD)


def gold_set_list(*, user=None) -> QuerySet[GoldSimilaritySet]:
    """Gold sets with pair and run counts; only those `user` may read when a user is given."""
    qs = GoldSimilaritySet.objects.all()
    condition = _gold_sets_readable_q(user) if user is not None else None
    if condition is not None:
        qs = qs.filter(pk__in=GoldSimilaritySet.objects.filter(condition).values("pk"))
    return qs.annotate(n_pairs=Count("pairs", distinct=True), n_runs=Count("runs", distinct=True)).order_by("name")


def gold_set_readable(*, gold_set: GoldSimilaritySet, user) -> bool:
    condition = _gold_sets_readable_q(user)
    return condition is None or GoldSimilaritySet.objects.filter(condition, pk=gold_set.pk).exists()


def gold_pairs(*, gold_set: GoldSimilaritySet, reference_id: str | None = None) -> QuerySet[GoldSimilarityPair]:
    qs = gold_set.pairs.all()
    return qs.filter(reference_id=reference_id) if reference_id else qs


def similarity_run_list(*, gold_set: GoldSimilaritySet | None = None, user=None) -> QuerySet[SimilarityRun]:
    """Similarity runs (of `gold_set`); only runs on gold sets `user` may read when a user is given."""
    qs = SimilarityRun.objects.select_related("job", "owner", "gold_set").defer("report").annotate(
        has_report=_HAS_REPORT)
    condition = _gold_sets_readable_q(user) if user is not None else None
    if condition is not None:
        qs = qs.filter(gold_set__in=GoldSimilaritySet.objects.filter(condition).values("pk"))
    return qs.filter(gold_set=gold_set) if gold_set is not None else qs


def similarity_leaderboard(*, gold_set: GoldSimilaritySet, sort: str = "spearman") -> list[SimilarityRun]:
    runs = list(similarity_run_list(gold_set=gold_set).filter(report__isnull=False))
    ascending = sort == "rmse"

    def key(run):
        value = getattr(run, sort if sort in ("rmse", "spearman", "pearson") else "spearman")
        return (value is None, (value if ascending else -value) if value is not None else 0.0, run.pk)

    return sorted(runs, key=key)


def pilot_run_list() -> QuerySet[PilotRun]:
    return PilotRun.objects.select_related("job", "owner").defer("report").annotate(has_report=_HAS_REPORT)
