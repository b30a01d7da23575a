"""Benchmarks API, mounted under /api/v1/."""
from django.urls import path

from benchmarks import api

urlpatterns = [
    path("benchmarks/versions/", api.VersionListApi.as_view(), name="api-benchmark-version-list"),
    path("benchmarks/versions/<int:pk>/", api.VersionDetailApi.as_view(), name="api-benchmark-version-detail"),
    path("benchmarks/versions/<int:pk>/approve/", api.VersionApproveApi.as_view(), name="api-benchmark-version-approve"),
    path("benchmarks/versions/<int:pk>/gold/", api.GoldReferenceListApi.as_view(), name="api-benchmark-gold-list"),
    path("benchmarks/runs/", api.EvaluationRunListApi.as_view(), name="api-benchmark-run-list"),
    path("benchmarks/runs/<int:pk>/", api.EvaluationRunDetailApi.as_view(), name="api-benchmark-run-detail"),
    path("benchmarks/runs/<int:pk>/report/", api.EvaluationRunReportApi.as_view(), name="api-benchmark-run-report"),
    path("benchmarks/runs/<int:pk>/report.csv", api.EvaluationRunCsvApi.as_view(), name="api-benchmark-run-csv"),
    path("models/", api.TrainedModelListApi.as_view(), name="api-trained-model-list"),
    path("sts/gold-sets/", api.GoldSetListApi.as_view(), name="api-sts-gold-set-list"),
    path("sts/gold-sets/<int:pk>/", api.GoldSetDetailApi.as_view(), name="api-sts-gold-set-detail"),
    path("sts/gold-sets/<int:pk>/publish/", api.GoldSetPublishApi.as_view(), name="api-sts-gold-set-publish"),
    path("sts/gold-sets/<int:pk>/pairs/", api.GoldPairListApi.as_view(), name="api-sts-gold-pair-list"),
    path("sts/gold-sets/<int:pk>/pairs.csv", api.GoldSetCsvApi.as_view(), name="api-sts-gold-set-csv"),
    path("sts/runs/", api.SimilarityRunListApi.as_view(), name="api-sts-run-list"),
    path("sts/runs/<int:pk>/", api.SimilarityRunDetailApi.as_view(), name="api-sts-run-detail"),
    path("sts/runs/<int:pk>/predictions.csv", api.SimilarityRunCsvApi.as_view(), name="api-sts-run-csv"),
]
