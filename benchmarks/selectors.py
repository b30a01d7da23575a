"""Reads of the benchmarks app: versions, gold, runs, leaderboards, and the method registries."""
from __future__ import annotations

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from benchmarks.models import (
    BenchmarkVersion,
    EvaluationRun,
    GoldReference,
    GoldSimilarityPair,
    GoldSimilaritySet,
    PilotRun,
    Segment,
    SimilarityRun,
)

_HAS_REPORT = ExpressionWrapper(Q(report__isnull=False), output_field=BooleanField())


# ----------------------------------------------------------------------------------------- registries
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


def retrieval_method_needs_gpu(name: str) -> bool:
    return method_queue(name) == "gpu"


def similarity_method_specs() -> list[dict]:
    from detection.methods.greek_registry import method_specs as greek_specs

    return greek_specs()


def similarity_method_names() -> list[str]:
    return [spec["name"] for spec in similarity_method_specs()]


def similarity_method_needs_model(name: str) -> bool:
    return any(spec["name"] == name and spec["needs_model"] for spec in similarity_method_specs())


def similarity_method_needs_gpu(name: str) -> bool:
    return method_queue(name) == "gpu"


# ------------------------------------------------------------------------------------- Loci Similes
def version_list() -> QuerySet[BenchmarkVersion]:
    return (BenchmarkVersion.objects.select_related("benchmark")
            .annotate(n_gold=Count("gold", distinct=True), n_runs=Count("runs", distinct=True))
            .order_by("benchmark__name", "-created", "-id"))


def segments_of(*, corpus_id: int) -> QuerySet[Segment]:
    return Segment.objects.filter(corpus_id=corpus_id).order_by("id")


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


def run_list(*, version: BenchmarkVersion | None = None) -> QuerySet[EvaluationRun]:
    qs = EvaluationRun.objects.select_related("job", "owner", "version__benchmark").defer(
        "report", "per_query", "per_fold").annotate(has_report=_HAS_REPORT)
    return qs.filter(version=version) if version is not None else qs


def leaderboard(*, version: BenchmarkVersion, sort: str = "recall@10") -> list[EvaluationRun]:
    """Finished runs of a version, best first by `sort` (a key of `EvaluationRun.summary`)."""
    runs = [r for r in run_list(version=version).filter(report__isnull=False)]

    def key(run):
        value = run.summary.get(sort)
        return (value is None, -(value or 0.0), run.pk)

    return sorted(runs, key=key)


# ------------------------------------------------------------------------------------------ Greek STS
def gold_set_list() -> QuerySet[GoldSimilaritySet]:
    return GoldSimilaritySet.objects.annotate(n_pairs=Count("pairs", distinct=True),
                                              n_runs=Count("runs", distinct=True)).order_by("name")


def gold_pairs(*, gold_set: GoldSimilaritySet, reference_id: str | None = None) -> QuerySet[GoldSimilarityPair]:
    qs = gold_set.pairs.all()
    return qs.filter(reference_id=reference_id) if reference_id else qs


def similarity_run_list(*, gold_set: GoldSimilaritySet | None = None) -> QuerySet[SimilarityRun]:
    qs = SimilarityRun.objects.select_related("job", "owner", "gold_set").defer("report").annotate(
        has_report=_HAS_REPORT)
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
