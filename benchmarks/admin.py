from django.contrib import admin

from benchmarks import models


@admin.register(models.Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["name", "created"]


@admin.register(models.BenchmarkVersion)
class BenchmarkVersionAdmin(admin.ModelAdmin):
    list_display = ["benchmark", "version", "created"]
    list_select_related = ["benchmark"]


@admin.register(models.Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ["name", "side", "created"]


@admin.register(models.Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ["seg_id", "corpus", "author", "work"]
    list_filter = ["corpus"]
    search_fields = ["seg_id", "text"]
    list_select_related = ["corpus"]


@admin.register(models.GoldReference)
class GoldReferenceAdmin(admin.ModelAdmin):
    list_display = ["pair_id", "version", "query", "source", "ref_type", "fold"]
    list_filter = ["version", "ref_type", "fold"]
    raw_id_fields = ["query", "source"]
    list_select_related = ["version__benchmark", "query", "source"]


@admin.register(models.EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "version", "method", "reranker", "split", "seed", "job", "created"]
    list_filter = ["method", "reranker"]
    raw_id_fields = ["job"]
    list_select_related = ["version__benchmark", "job"]


@admin.register(models.GoldSimilaritySet)
class GoldSimilaritySetAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "created"]


@admin.register(models.GoldSimilarityPair)
class GoldSimilarityPairAdmin(admin.ModelAdmin):
    list_display = ["gold_set", "reference_id", "candidate_id", "score"]
    list_filter = ["gold_set"]


@admin.register(models.SimilarityRun)
class SimilarityRunAdmin(admin.ModelAdmin):
    list_display = ["id", "gold_set", "method", "calibration", "rmse", "spearman", "pearson", "created"]
    raw_id_fields = ["job"]


@admin.register(models.PilotRun)
class PilotRunAdmin(admin.ModelAdmin):
    list_display = ["id", "method", "level", "best_threshold", "best_f1", "created"]
    raw_id_fields = ["job"]
