"""Workbench API, mounted under /api/v1/."""
from django.urls import path

from workbench import api

urlpatterns = [
    path("workbench/methods/", api.MethodListApi.as_view(), name="api-workbench-methods"),
    path("workbench/compare/", api.CompareQueryApi.as_view(), name="api-workbench-compare"),
    path("workbench/corpora/", api.CorpusListApi.as_view(), name="api-workbench-corpora"),
    path("workbench/documents/", api.DocumentListApi.as_view(), name="api-workbench-documents"),
    path("workbench/runs/", api.RunListApi.as_view(), name="api-workbench-runs"),
    path("workbench/runs/<int:pk>/", api.RunDetailApi.as_view(), name="api-workbench-run"),
    path("workbench/runs/<int:pk>/delete-plan/", api.RunDeletePlanApi.as_view(), name="api-workbench-run-delete-plan"),
    path("workbench/runs/<int:pk>/candidates/", api.CandidateListApi.as_view(), name="api-workbench-candidates"),
    path("workbench/runs/<int:pk>/export/", api.ExportApi.as_view(), name="api-workbench-export"),
    path("workbench/runs/<int:pk>/promote/", api.PromoteApi.as_view(), name="api-workbench-promote"),
    path("workbench/runs/<int:pk>/refit/", api.RefitApi.as_view(), name="api-workbench-refit"),
    path("workbench/candidates/<int:pk>/", api.CandidateDetailApi.as_view(), name="api-workbench-candidate"),
    path("workbench/candidates/<int:pk>/verdict/", api.VerdictApi.as_view(), name="api-workbench-verdict"),
]
